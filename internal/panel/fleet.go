package panel

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
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

// The patterns that read panels and channel lists are compiled by the first
// one read, not at init: a daemon without a fleet never needs them.
var headerRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\*\*🖥 ([A-Za-z0-9][A-Za-z0-9_-]{0,63})\*\* · (🟢 up|⚫ stopped) · ccbridge [^\n]* · checked in <t:([0-9]{1,12}):R>`)
})

// ParseHeader reads the machine, whether its daemon said it stopped, and
// its last check-in from a panel message; ok is false for any other
// message.
func ParseHeader(content string) (machine string, stopped bool, at time.Time, ok bool) {
	m := headerRe().FindStringSubmatch(content)
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
	// Channels are the channels and threads its panel and its channel
	// list (ChannelList) name: the ones it owns.
	Channels []string
	// Complete says Channels are all it owns: its channel list was read
	// whole, or its panel was not cut.
	Complete bool
	// ListID is the message of its channel list ("" when none was read).
	ListID string
}

var channelRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<#([0-9]{1,21})>`) })

// ParseChannels lists the channels a panel message mentions.
func ParseChannels(content string) []string {
	var out []string
	for _, m := range channelRe().FindAllStringSubmatch(content, -1) {
		out = append(out, m[1])
	}
	return out
}

// PanelComplete reports whether a panel message shows all it drew: Render
// and Stopped cut a panel at Discord's limit.
func PanelComplete(content string) bool { return utf8.RuneCountInString(content) < chat.Limit }

// A panel is cut at Discord's 2,000 characters, and with it the channels
// it names; so each machine also keeps a channel list: a second message
// that names only the project channels it maps, and says when even those
// do not fit (" … and N more"), so no reader takes a cut list for whole.
const (
	listMarker = "🧭"
	listMore   = " … and %d more"
)

var (
	listRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\*\*` + listMarker + ` ([A-Za-z0-9][A-Za-z0-9_-]{0,63})\*\* · ccbridge [^\n]*\n`)
	})
	listMoreRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` … and [0-9]+ more$`) })
)

// ChannelList draws this machine's channel list for a server.
func (p *Panel) ChannelList(server string) chat.Message {
	srv, _ := p.server(server)
	head := fmt.Sprintf("**%s %s** · ccbridge %s · the channels this machine maps, for the other machines sharing the bot\n", listMarker, p.machine(), srv.Name)
	var b strings.Builder
	b.WriteString(head)
	for i, proj := range srv.Projects {
		ref := "<#" + proj.ChannelID + ">"
		if i > 0 {
			ref = " " + ref
		}
		more := fmt.Sprintf(listMore, len(srv.Projects)-i)
		if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(ref)+utf8.RuneCountInString(more) > chat.Limit {
			b.WriteString(more)
			break
		}
		b.WriteString(ref)
	}
	return chat.Message{Content: b.String()}
}

// ParseChannelList reads a channel list: its machine, the channels it
// names and whether they are all; ok is false for any other message.
func ParseChannelList(content string) (machine string, channels []string, complete, ok bool) {
	m := listRe().FindStringSubmatch(content)
	if m == nil {
		return "", nil, false, false
	}
	return m[1], ParseChannels(content[len(m[0]):]), !listMoreRe().MatchString(content), true
}

// Fleet is what this daemon knows of the machines it shares its bots with.
type Fleet struct {
	Machine          string
	UnreachableAfter time.Duration

	mu     sync.Mutex
	peers  map[string][]Peer    // server → the other machines, by name
	own    map[string][]string  // server → the channels this machine maps
	readAt map[string]time.Time // server → when its peers were last read
	now    func() time.Time
}

// NewFleet returns a fleet view of one machine, with no peers seen yet.
func NewFleet(machine string, unreachableAfter time.Duration) *Fleet {
	return &Fleet{Machine: machine, UnreachableAfter: unreachableAfter, peers: map[string][]Peer{}, own: map[string][]string{},
		readAt: map[string]time.Time{}, now: time.Now}
}

// SetOwn records the channels this machine maps on a server, which the
// others must not map too.
func (f *Fleet) SetOwn(server string, channels []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.own[server] = slices.Clone(channels)
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
	f.readAt[server] = f.now()
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
// no machine maps: the first by name of the machines that are up. It does
// not while its view of the others may be stale (not read within
// UnreachableAfter) or partial (a machine that is up whose channels are not
// all known): a channel it takes for unmapped may be another's.
func (f *Fleet) Leads(server string) bool {
	if f == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if at, ok := f.readAt[server]; !ok || f.now().Sub(at) >= f.UnreachableAfter {
		return false
	}
	for _, p := range f.peers[server] {
		if f.up(p) && (p.Machine < f.Machine || !p.Complete) {
			return false
		}
	}
	return true
}

// Overlaps lists, for each other machine that is up, the channels it maps
// that this machine maps too: both would type each message into a Claude
// of their own, and both would reply.
func (f *Fleet) Overlaps(server string) map[string][]string {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.overlapsLocked(server)
}

func (f *Fleet) overlapsLocked(server string) map[string][]string {
	out := map[string][]string{}
	for _, p := range f.peers[server] {
		if !f.up(p) {
			continue
		}
		for _, ch := range f.own[server] {
			if slices.Contains(p.Channels, ch) {
				out[p.Machine] = append(out[p.Machine], ch)
			}
		}
	}
	return out
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
	line := "Other machines: " + strings.Join(parts, " · ")
	overlaps := f.overlapsLocked(server)
	for _, m := range slices.Sorted(maps.Keys(overlaps)) {
		var refs []string
		for _, ch := range overlaps[m] {
			refs = append(refs, "<#"+ch+">")
		}
		line += fmt.Sprintf("\n⚠️ **%s** maps %s too: both machines answer there. Map each channel on one machine only.", m, strings.Join(refs, " "))
	}
	return line
}
