package doctor

import (
	"strings"
	"testing"
)

// A Telegram bot is not checked as a Discord one: doctor asks Telegram,
// and runs none of the Discord checks with a Telegram token (which Discord
// would refuse, failing doctor on a good config).
func TestDoctorTelegramServerIsNotADiscordOne(t *testing.T) {
	w := newTGWorld(t)
	rs, out := w.run()
	if !Passed(rs) {
		t.Fatalf("a good config with a Telegram bot failed doctor:\n%s", out)
	}
	if r := find(rs, "bot phone"); r.Status != OK || !strings.Contains(r.Detail, "Telegram") {
		t.Errorf("bot phone: %v %q\n%s", r.Status, r.Detail, out)
	}
	for _, r := range rs {
		for _, discordOnly := range []string{"intents", "server", "/open", "privacy"} {
			if strings.HasPrefix(r.Name, "bot phone ") && strings.Contains(r.Name, discordOnly) {
				t.Errorf("a Discord check ran for the Telegram bot: %s %v %q", r.Name, r.Status, r.Detail)
			}
		}
	}
	if r := find(rs, "bot home"); r.Status != OK {
		t.Errorf("the Discord bot beside it: %v %q", r.Status, r.Detail)
	}
}

// A web view others can reach without TLS is said, with what it means,
// and does not fail doctor (issue 28).
func TestDoctorSaysWhatAnOpenWebViewMeans(t *testing.T) {
	w := newWorld(t)
	w.configText = "[web]\nlisten = \"0.0.0.0:7878\"\npublic_url = \"https://box.example.com\"\n" + w.configText
	rs, out := w.run()
	r := find(rs, "config")
	if r.Status != Warn || !strings.Contains(r.Detail, "web.listen: 0.0.0.0:7878 is reachable from other machines without TLS: anyone on the network between can read the pages and the links") {
		t.Errorf("config: %v %q\n%s", r.Status, r.Detail, out)
	}
	if !Passed(rs) {
		t.Errorf("a warning failed doctor:\n%s", out)
	}
}
