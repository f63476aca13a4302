package config

import (
	"strings"
	"testing"
	"time"
)

func TestCatchUpDefaultAndBounds(t *testing.T) {
	c := parseValid(t)
	if c.Discord.CatchUp.Duration != 15*time.Minute {
		t.Errorf("catch_up default = %s, want 15m", c.Discord.CatchUp.Duration)
	}
	for _, tc := range []struct {
		value string
		ok    bool
	}{{"30s", true}, {"24h", true}, {"-1m", false}, {"500ms", false}, {"25h", false}} {
		t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
		toml := "[discord]\ncatch_up = \"" + tc.value + "\"\n" + strings.ReplaceAll(validTOML, "%s", t.TempDir())
		c, err := Parse(toml)
		if err != nil {
			t.Fatalf("%s: %v", tc.value, err)
		}
		err = c.Validate()
		if tc.ok != (err == nil) {
			t.Errorf("catch_up = %q: err = %v, want ok=%v", tc.value, err, tc.ok)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "discord.catch_up")) {
			t.Errorf("catch_up = %q: error does not name the key: %v", tc.value, err)
		}
	}
	if _, err := Parse("[discord]\ncatch_up = \"soon\"\n"); err == nil || !strings.Contains(err.Error(), "soon") {
		t.Errorf("catch_up = soon: err = %v", err)
	}
}

// A Telegram server's catch-up age is [telegram] catch_up; without it,
// [discord] catch_up's, as before the key. A bad one is named by its key.
func TestTelegramCatchUpIsItsOwn(t *testing.T) {
	for _, tc := range []struct {
		toml string
		want time.Duration
	}{
		{"[discord]\ncatch_up = \"1h\"\n[telegram]\ncatch_up = \"2m\"\n", 2 * time.Minute},
		{"[discord]\ncatch_up = \"1h\"\n", time.Hour},
		{"", DefaultCatchUp},
	} {
		c, err := Parse(tc.toml + tgConfig(t, "", ""))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.CatchUp(c.Servers[0]); got != tc.want {
			t.Errorf("%q: Telegram catch_up = %s, want %s", tc.toml, got, tc.want)
		}
		if got, want := c.CatchUp(Server{Name: "home"}), c.Discord.CatchUp.Duration; got != want {
			t.Errorf("%q: a Discord server's catch_up = %s, want [discord]'s %s", tc.toml, got, want)
		}
	}
	c, err := Parse("[telegram]\ncatch_up = \"25h\"\n" + tgConfig(t, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "telegram.catch_up") {
		t.Errorf("[telegram] catch_up = 25h: err = %v, want one naming telegram.catch_up", err)
	}
}
