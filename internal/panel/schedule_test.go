package panel

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

func TestPanelShowsTheNextSchedule(t *testing.T) {
	p, reg := newPanel(t, 1)
	ctx := context.Background()
	if got := p.Render(ctx, "home").Content; strings.Contains(got, "⏰") {
		t.Fatalf("a panel with no schedule shows one:\n%s", got)
	}
	soon := time.Now().Add(20 * time.Minute).Truncate(time.Second)
	for id, s := range map[string]state.Schedule{
		"later": {Server: "home", ChannelID: "100000000000000100", Prompt: "later one", Next: soon.Add(time.Hour)},
		"soon":  {Server: "home", ChannelID: "100000000000000100", Prompt: "run   the\nbenchmarks again", Next: soon},
		"other": {Server: "work", ChannelID: "100000000000000900", Prompt: "another server's", Next: soon.Add(-time.Minute)},
	} {
		if _, err := reg.Schedules.Create(ctx, id, s); err != nil {
			t.Fatal(err)
		}
	}
	got := p.Render(ctx, "home").Content
	want := "⏰ next schedule <t:" + strconv.FormatInt(soon.Unix(), 10) + ":R> in <#100000000000000100>: run the benchmarks again (2 scheduled; /schedules lists them)"
	if !strings.Contains(got, want) {
		t.Fatalf("panel lacks %q:\n%s", want, got)
	}
}
