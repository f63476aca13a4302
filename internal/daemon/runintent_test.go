package daemon

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// The Message Content intent off: run says what setup and doctor say, with
// the link to the switch, not Discord's raw close code (first contact 2,
// finding 3).
func TestRunWithTheMessageContentIntentOffSaysWhereToTurnItOn(t *testing.T) {
	dir := daemonEnv(t)
	srv := fakediscord.New(t)
	bot := srv.Main()
	srv.SetMessageContentIntent(bot, false)
	cfg := runConfig(t, dir, srv.URL, bot.Token, bot.GuildID)
	_, errOut, code := runCLI(t, "run", "--config", cfg)
	want := "https://discord.com/developers/applications/" + bot.UserID + "/bot → Privileged Gateway Intents → Message Content Intent"
	if code != exitError || !strings.Contains(errOut, "server home: the Message Content Intent is off") || !strings.Contains(errOut, want) ||
		strings.Contains(errOut, "websocket: close") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
}
