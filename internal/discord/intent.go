package discord

// MessageContentOff is what setup, doctor and run say when the bot's
// Message Content Intent is off.
const MessageContentOff = "the Message Content Intent is off, so Discord refuses ccbridge's connection (close code 4014)"

// EnableMessageContent says where to turn the intent on for the application
// appID ("" when it is not known).
func EnableMessageContent(appID string) string {
	if appID == "" {
		return "turn it on: https://discord.com/developers/applications → your application → Bot → Privileged Gateway Intents → " +
			"Message Content Intent → on → Save Changes"
	}
	return "turn it on: https://discord.com/developers/applications/" + appID + "/bot → Privileged Gateway Intents → " +
		"Message Content Intent → on → Save Changes"
}

// IntentError is a connection Discord refused because the Message Content
// Intent is off; its text says where to turn it on.
type IntentError struct {
	AppID string
	Err   error // the gateway's close
}

func (e *IntentError) Error() string { return MessageContentOff + "; " + EnableMessageContent(e.AppID) }
func (e *IntentError) Unwrap() error { return e.Err }
