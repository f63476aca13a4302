package approval

// CodeBlock quotes text in a message other than a card the way a card
// quotes a command: masked before anything is cut, fenced so it cannot
// break out, every hidden character made visible, and, when it does not fit
// in limit characters, cut in the middle with its head and tail kept.
func CodeBlock(text string, limit int) string { return codeBlock("", text, limit) }
