package panel

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
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
	if !f.Leads("home") || f.Line("home") != "" {
		t.Fatal("alone: leads, and shows no other machine")
	}
	changed := f.SetPeers("home", []Peer{
		{Machine: "a", MessageID: "1", CheckedIn: now.Add(-10 * time.Second)},
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
	if !strings.Contains(f.Line("home"), "🔴 **a** unreachable") || !f.Leads("home") {
		t.Errorf("after a went quiet: %q, leads %v", f.Line("home"), f.Leads("home"))
	}
	f.SetPeers("home", []Peer{{Machine: "a", CheckedIn: now, Stopped: true}})
	if !strings.Contains(f.Line("home"), "⚫ **a** stopped") || !f.Leads("home") {
		t.Errorf("a stopped: %q, leads %v", f.Line("home"), f.Leads("home"))
	}
	if !f.Leads("other") {
		t.Error("a server without peers")
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
