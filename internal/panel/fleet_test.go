package panel

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

func TestPanelHeaderNamesTheMachineAndItsCheckIn(t *testing.T) {
	p, _ := newPanel(t, 1)
	p.Fleet = NewFleet("desk-1", time.Minute)
	m := p.Render(context.Background(), "home")
	machine, stopped, at, ok := ParseHeader(m.Content)
	if !ok || machine != "desk-1" || stopped || time.Since(at) > 5*time.Second {
		t.Fatalf("header of %q: %q %v %v %v", m.Content, machine, stopped, at, ok)
	}
	down := p.Stopped("home")
	if machine, stopped, _, ok := ParseHeader(down.Content); !ok || machine != "desk-1" || !stopped || len(down.Rows) != 0 ||
		!slices.Contains(ParseChannels(down.Content), "100000000000000100") {
		t.Fatalf("stopped panel %+v", down)
	}
	for _, other := range []string{"**p0** — idle", "hello <t:5:R>", "**🖥 x** said <t:5:R>"} {
		if _, _, _, ok := ParseHeader(other); ok {
			t.Errorf("%q taken for a panel", other)
		}
	}
}

func TestFleetShowsPeersUpAndUnreachable(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	f := NewFleet("m", 30*time.Second)
	f.now = func() time.Time { return now }
	if f.Leads("home") {
		t.Fatal("leads before it ever read the panel channel")
	}
	f.SetPeers("home", nil)
	if !f.Leads("home") || f.Line("home") != "" {
		t.Fatal("alone: leads, and shows no other machine")
	}
	changed := f.SetPeers("home", []Peer{
		{Machine: "a", MessageID: "1", CheckedIn: now.Add(-10 * time.Second), Complete: true},
		{Machine: "a", MessageID: "0", CheckedIn: now.Add(-time.Hour)}, // an older panel of a
		{Machine: "z", MessageID: "2", CheckedIn: now.Add(-time.Minute)},
		{Machine: "m", MessageID: "3", CheckedIn: now}, // this machine's own
	})
	line := f.Line("home")
	if !changed || !strings.Contains(line, "🟢 **a** up") || !strings.Contains(line, "🔴 **z** unreachable") || strings.Contains(line, "**m**") {
		t.Fatalf("line %q (changed %v)", line, changed)
	}
	if f.Leads("home") {
		t.Error("m leads while a (first by name) is up")
	}
	if f.SetPeers("home", []Peer{{Machine: "a", CheckedIn: now.Add(-5 * time.Second)}, {Machine: "z", CheckedIn: now.Add(-time.Minute)}}) {
		t.Error("a heartbeat of an up machine changed the line")
	}
	now = now.Add(30 * time.Second) // a stops checking in
	if f.Leads("home") {
		t.Error("leads on a view of the others as old as unreachable_after")
	}
	f.SetPeers("home", []Peer{{Machine: "a", CheckedIn: now.Add(-30 * time.Second)}, {Machine: "z", CheckedIn: now.Add(-time.Minute)}})
	if !strings.Contains(f.Line("home"), "🔴 **a** unreachable") || !f.Leads("home") {
		t.Errorf("after a went quiet: %q, leads %v", f.Line("home"), f.Leads("home"))
	}
	f.SetPeers("home", []Peer{{Machine: "a", CheckedIn: now, Stopped: true}})
	if !strings.Contains(f.Line("home"), "⚫ **a** stopped") || !f.Leads("home") {
		t.Errorf("a stopped: %q, leads %v", f.Line("home"), f.Leads("home"))
	}
	f.SetPeers("other", nil)
	if !f.Leads("other") {
		t.Error("a server without peers")
	}
}

// TestReviewPanelCutHidesOwnedChannels (security review 2, finding 13): a
// panel is cut at 2,000 characters, and the channels past the cut were
// taken for unmapped by the leader, which then answered commands in them
// for another machine. The channel list names every project channel; a
// peer known only by a cut panel is partial, and the leader stays silent.
func TestReviewPanelCutHidesOwnedChannels(t *testing.T) {
	p, reg := newPanel(t, 30)
	ctx := context.Background()
	for i := range 30 { // the review's real paths and figures cut sooner
		reg.Sessions.Update(ctx, fmt.Sprintf("home-p0-t%d", i), func(g *state.Registered) error {
			g.Server, g.Project, g.ThreadID = "home", "p0", fmt.Sprintf("1000000000000009%02d", i)
			return nil
		})
	}
	p.Fleet = NewFleet("a", time.Minute)
	pm := p.Render(ctx, "home")
	shown := ParseChannels(pm.Content)
	last := ""
	for i := range 30 {
		if id := fmt.Sprintf("1000000000000001%02d", i); !slices.Contains(shown, id) {
			last = id
		}
	}
	if PanelComplete(pm.Content) || last == "" {
		t.Fatalf("the panel was not cut as the review found (%d characters)", len([]rune(pm.Content)))
	}
	list := p.ChannelList("home")
	machine, chans, complete, ok := ParseChannelList(list.Content)
	if !ok || machine != "a" || !complete || len(chans) != 30 || !slices.Contains(chans, last) {
		t.Fatalf("channel list %q: %q %v %v %v", list.Content, machine, chans, complete, ok)
	}
	if _, _, _, ok := ParseHeader(list.Content); ok {
		t.Fatal("the channel list is taken for a panel")
	}
	if _, _, _, ok := ParseChannelList(pm.Content); ok {
		t.Fatal("the panel is taken for a channel list")
	}

	now := time.Now()
	b := NewFleet("b", time.Minute) // after a by name: a leads, unless b cannot see all of a
	b.SetPeers("home", []Peer{{Machine: "a", CheckedIn: now, Channels: ParseChannels(pm.Content), Complete: PanelComplete(pm.Content)}})
	z := NewFleet("0", time.Minute) // before a by name: it would lead
	z.SetPeers("home", []Peer{{Machine: "a", CheckedIn: now, Channels: ParseChannels(pm.Content), Complete: false}})
	if z.Leads("home") {
		t.Error("a machine leads while another machine that is up is known only by a cut panel")
	}
	z.SetPeers("home", []Peer{{Machine: "a", CheckedIn: now, Channels: chans, Complete: complete}})
	if m, up, ok := z.Owner("home", last); m != "a" || !up || !ok {
		t.Errorf("owner of a's last channel: %q %v %v", m, up, ok)
	}
	if !z.Leads("home") {
		t.Error("no leader with every channel of the others known")
	}
}

// A channel list that does not fit one message says so, and is partial.
func TestChannelListSaysWhenItIsCut(t *testing.T) {
	p, _ := newPanel(t, 100)
	list := p.ChannelList("home")
	_, chans, complete, ok := ParseChannelList(list.Content)
	if !ok || complete || len(chans) >= 100 || len([]rune(list.Content)) > 2000 || !strings.HasSuffix(list.Content, fmt.Sprintf(" … and %d more", 100-len(chans))) {
		t.Fatalf("%d channels, complete %v, %d characters: %q", len(chans), complete, len([]rune(list.Content)), list.Content)
	}
}

// Two machines mapping one channel: each names the other in its line.
func TestFleetNamesAChannelMappedTwice(t *testing.T) {
	f := NewFleet("m", time.Minute)
	f.SetOwn("home", []string{"1", "2"})
	f.SetPeers("home", []Peer{{Machine: "a", CheckedIn: time.Now(), Channels: []string{"2", "3"}, Complete: true}})
	if o := f.Overlaps("home"); len(o) != 1 || !slices.Equal(o["a"], []string{"2"}) {
		t.Fatalf("overlaps %v", o)
	}
	if line := f.Line("home"); !strings.Contains(line, "⚠️ **a** maps <#2> too") {
		t.Fatalf("line %q", line)
	}
}

func TestFleetKnowsWhichMachineOwnsAChannel(t *testing.T) {
	p, _ := newPanel(t, 2)
	content := p.Render(context.Background(), "home").Content
	chans := ParseChannels(content)
	if !slices.Contains(chans, "100000000000000100") || !slices.Contains(chans, "100000000000000101") {
		t.Fatalf("panel channels %v of:\n%s", chans, content)
	}
	now := time.Unix(1_800_000_000, 0)
	f := NewFleet("m", 30*time.Second)
	f.now = func() time.Time { return now }
	f.SetPeers("home", []Peer{{Machine: "a", CheckedIn: now, Channels: chans}, {Machine: "b", CheckedIn: now.Add(-time.Hour), Channels: []string{"9"}}})
	if m, up, ok := f.Owner("home", "100000000000000101"); m != "a" || !up || !ok {
		t.Errorf("owner of a's channel: %q %v %v", m, up, ok)
	}
	if m, up, ok := f.Owner("home", "9"); m != "b" || up || !ok {
		t.Errorf("owner of b's channel: %q %v %v", m, up, ok)
	}
	if _, _, ok := f.Owner("home", "8"); ok {
		t.Error("an unlisted channel has an owner")
	}
}
