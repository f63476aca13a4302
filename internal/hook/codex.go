package hook

import (
	"slices"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
)

// agentCodex is claudehook.Input.Agent for Codex CLI.
const agentCodex = "codex"

// fromAgent reads a Codex payload into Claude's terms when the hook's
// command line says Codex runs it (codexhook.AgentFlag; a payload never
// decides): its turn_id is the prompt id a turn is claimed by.
func fromAgent(in *claudehook.Input, args []string) {
	if !slices.Contains(args, codexhook.AgentFlag) {
		return
	}
	in.Agent = agentCodex
	if in.PromptID == "" {
		in.PromptID = in.TurnID
	}
}

// transcriptReply reads the turn's whole reply from the agent's transcript;
// found is false until it holds the reply's last message.
func transcriptReply(in *claudehook.Input) (string, bool, error) {
	if in.Agent == agentCodex {
		return codexhook.FinalReply(in.TranscriptPath, in.TurnID, in.LastAssistantMessage)
	}
	return claudehook.FinalReply(in.TranscriptPath, in.LastAssistantMessage, in.PromptID)
}

// textBefore reads what the model wrote before the tool call in.ToolUseID,
// as text blocks of one message id (for de-duplication). A Codex message
// before a call belongs to that call alone, so the call's id serves.
func textBefore(in *claudehook.Input) (msgID string, blocks []claudehook.IndexedText, found bool, err error) {
	if in.Agent != agentCodex {
		return claudehook.TextBefore(in.TranscriptPath, in.ToolUseID)
	}
	msgs, found, err := codexhook.TextBefore(in.TranscriptPath, in.ToolUseID)
	for i, m := range msgs {
		blocks = append(blocks, claudehook.IndexedText{Index: i, Text: m.Text})
	}
	return in.ToolUseID, blocks, found, err
}
