package panel

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Several daemons (one per machine) may share a bot. Each keeps its own
// panel message in the server's general channel and refreshes it at least
// every third of the unreachable-after time; the time in its first line is
// the machine's heartbeat. Each daemon reads the others' panel messages
// (Discord is the fleet's only shared medium) and shows which machines are
// up and which have not checked in for a while.

// header is the first line of a panel message: the machine, whether its
// daemon runs, and when it last checked in. ParseHeader reads it back.
func header(machine, server string, stopped bool, at time.Time) string {
	state := stateUp
	if stopped {
		state = stateStopped
	}
	return fmt.Sprintf("**🖥 %s** · %s · ccbridge %s · checked in <t:%d:R>", machine, state, server, at.Unix())
}

const (
	stateUp      = "🟢 up"
	stateStopped = "⚫ stopped"
)

var headerRe = regexp.MustCompile(`^\*\*🖥 ([A-Za-z0-9][A-Za-z0-9_-]{0,63})\*\* · (🟢 up|⚫ stopped) · ccbridge [^\n]* · checked in <t:([0-9]{1,12}):R>`)

// ParseHeader reads the machine, whether its daemon said it stopped, and
// its last check-in from a panel message; ok is false for any other
// message.
func ParseHeader(content string) (machine string, stopped bool, at time.Time, ok bool) {
	m := headerRe.FindStringSubmatch(content)
	if m == nil {
		return "", false, time.Time{}, false
	}
	sec, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil {
		return "", false, time.Time{}, false
	}
	return m[1], m[2] == stateStopped, time.Unix(sec, 0), true
}

// Peer is another machine's panel message as last read.
type Peer struct {
	Machine   string
	MessageID string
	CheckedIn time.Time
	// Stopped is set when its daemon said, on its way out, that it stopped.
	Stopped bool
	// Channels are the channels and threads its panel lists (the ones it
	// owns).
	Channels []string
}

var channelRe = regexp.MustCompile(`<#([0-9]{1,21})>`)

// ParseChannels lists the channels a panel message mentions.
func ParseChannels(content string) []string {
	var out []string
	for _, m := range channelRe.FindAllStringSubmatch(content, -1) {
		out = append(out, m[1])
	}
	return out
}

// Fleet is what this daemon knows of the machines it shares its bots with.
type Fleet struct {
	Machine          string
	UnreachableAfter time.Duration

	mu    sync.Mutex
	peers map[string][]Peer // server → the other machines, by name
	now   func() time.Time
}

// NewFleet returns a fleet view of one machine, with no peers seen yet.
func NewFleet(machine string, unreachableAfter time.Duration) *Fleet {
	return &Fleet{Machine: machine, UnreachableAfter: unreachableAfter, peers: map[string][]Peer{}, now: time.Now}
}

// SetPeers records the panel messages read from a server's general
// channel; messages of this machine and older duplicates are dropped.
// It reports whether what the panel shows of them changed.
func (f *Fleet) SetPeers(server string, seen []Peer) bool {
	latest := map[string]Peer{}
	for _, p := range seen {
		if p.Machine == f.Machine {
			continue
		}
		if cur, ok := latest[p.Machine]; !ok || p.CheckedIn.After(cur.CheckedIn) {
			latest[p.Machine] = p
		}
	}
	var peers []Peer
	for _, p := range latest {
		peers = append(peers, p)
	}
	slices.SortFunc(peers, func(a, b Peer) int { return strings.Compare(a.Machine, b.Machine) })
	f.mu.Lock()
	defer f.mu.Unlock()
	before := f.lineLocked(server)
	f.peers[server] = peers
	return f.lineLocked(server) != before
}

// Peers returns the other machines last seen in a server's panel channel.
func (f *Fleet) Peers(server string) []Peer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.peers[server])
}

func (f *Fleet) up(p Peer) bool { return !p.Stopped && f.now().Sub(p.CheckedIn) < f.UnreachableAfter }

// Leads reports whether this machine answers for a server's channels that
// no machine maps: the first by name of the machines that are up.
func (f *Fleet) Leads(server string) bool {
	if f == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.peers[server] {
		if p.Machine < f.Machine && f.up(p) {
			return false
		}
	}
	return true
}

// Owner finds the other machine whose panel lists a channel (or thread):
// its name and whether it is up.
func (f *Fleet) Owner(server, channelID string) (machine string, up, ok bool) {
	if f == nil || channelID == "" {
		return "", false, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.peers[server] {
		if slices.Contains(p.Channels, channelID) {
			return p.Machine, f.up(p), true
		}
	}
	return "", false, false
}

// Line is the panel's line about the other machines ("" when none was
// seen). An up machine is shown without its time, so that another
// machine's heartbeat does not redraw this panel.
func (f *Fleet) Line(server string) string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lineLocked(server)
}

func (f *Fleet) lineLocked(server string) string {
	var parts []string
	for _, p := range f.peers[server] {
		switch {
		case f.up(p):
			parts = append(parts, fmt.Sprintf("🟢 **%s** up", p.Machine))
		case p.Stopped:
			parts = append(parts, fmt.Sprintf("⚫ **%s** stopped (<t:%d:R>)", p.Machine, p.CheckedIn.Unix()))
		default:
			parts = append(parts, fmt.Sprintf("🔴 **%s** unreachable (last checked in <t:%d:R>)", p.Machine, p.CheckedIn.Unix()))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Other machines: " + strings.Join(parts, " · ")
}
