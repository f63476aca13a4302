package setup

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
)

// Setup sets up Discord bots: a Telegram bot's entry is neither offered
// nor matched by token (its token asked of Discord), and stays as it was.
func TestSetupLeavesATelegramBotAlone(t *testing.T) {
	f := newFixture(t)
	proj := filepath.Join(f.dir, "src", "api")
	_ = os.MkdirAll(proj, 0o755)
	tg := "\n[[servers]]\nname = \"phone\"\nplatform = \"telegram\"\ntoken = \"123456:telegram-token\"\nchat_id = \"-1001234567890\"\nowner_ids = [\"123456789\"]\n" +
		"  [[servers.projects]]\n  name = \"tg\"\n  topic_id = \"42\"\n  path = \"" + proj + "\"\n"
	if err := os.WriteFile(f.cfg, []byte("[discord]\napi_base = \""+f.srv.URL+"\"\n"+tg), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.srv.AddChannel(f.bot.GuildID, "api")
	out, err := f.run(t, lines(f.bot.Token, "home", "", "2", proj, "", ""), 5*time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if strings.Contains(out, `"phone"`) {
		t.Errorf("setup offered the Telegram bot:\n%s", out)
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("config check: %v\n%s", err, out)
	}
	if len(c.Servers) != 2 || !reflect.DeepEqual(c.Servers[0], before.Servers[0]) || c.Servers[1].Name != "home" || c.Servers[1].GuildID != f.bot.GuildID {
		t.Fatalf("servers:\nbefore %+v\nafter  %+v\n%s", before.Servers, c.Servers, out)
	}
}
