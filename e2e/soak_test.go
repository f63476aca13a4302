//go:build e2e && soak

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// The soak (`make soak`, not part of `make test`): the real Claude Code CLI,
// two bots, six project channels and two threads, owner messages at a steady
// rate for $SOAK (default 10m) while Discord fails in every way the fake
// knows and the daemon is SIGKILLed and restarted every 45–90 s. The
// schedule comes from $SOAK_SEED (printed), so a failing run can be replayed.
// After a quiet drain every message must have reached Claude exactly once
// and in its lane's order (or, older than catch_up, carry its ⚠️), and every
// reply must be in Discord exactly once.

const soakRSSLimit = 64 << 20

// soakLane is one channel or thread the soak talks into.
type soakLane struct {
	id      string // L0, L1, … (in every message of the lane)
	channel string
	sent    []*fakediscord.Message
}

// soakEvent is one step of the schedule.
type soakEvent struct {
	at   time.Duration
	kind string // say, fault, kill
	lane int
	arg  int
}

func TestSoak(t *testing.T) {
	dur := 10 * time.Minute
	if v := os.Getenv("SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("SOAK=%q: %v", v, err)
		}
		dur = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SOAK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SOAK_SEED=%q: %v", v, err)
		}
		seed = s
	}
	t.Logf("soak: %s, seed %d", dur, seed)

	b := newBridge(t, 2, 3, "")
	// The product's defaults: the reply footer is on.
	b.reconfigure(func(cfg string) string { return strings.ReplaceAll(cfg, "  footer = \"off\"\n", "") })
	var lanes []*soakLane
	for _, p := range b.projects {
		lanes = append(lanes, &soakLane{channel: p.channel})
	}
	for i, p := range []*project{b.projects[0], b.projects[len(b.projects)-1]} {
		lanes = append(lanes, &soakLane{channel: b.srv.StartThread(p.channel, fmt.Sprintf("soak thread %d", i), b.owner)})
	}
	for i, l := range lanes {
		l.id = fmt.Sprintf("L%d", i)
	}

	rng := rand.New(rand.NewPCG(seed, 0x50a6))
	events := soakSchedule(rng, dur, len(lanes))
	var stats struct{ kills, faults int }
	var maxRSS int64
	start := time.Now()
	for _, ev := range events {
		if wait := time.Until(start.Add(ev.at)); wait > 0 {
			time.Sleep(wait)
		}
		maxRSS = max(maxRSS, daemonRSS(b))
		switch ev.kind {
		case "say":
			l := lanes[ev.lane]
			text := fmt.Sprintf("soak-%s-%04d", l.id, len(l.sent))
			l.sent = append(l.sent, b.srv.Post(l.channel, b.owner, text))
		case "fault":
			stats.faults++
			soakFault(b, rng, ev.arg)
		case "kill":
			stats.kills++
			b.kill()
		case "start":
			b.start()
		}
	}

	// The quiet drain: no faults, no kills; wait for every message and reply.
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		maxRSS = max(maxRSS, daemonRSS(b))
		if r := soakTally(t, b, lanes); r.missing == 0 {
			break
		}
		time.Sleep(2 * time.Second)
	}
	r := soakTally(t, b, lanes)
	orphans := soakOrphans(t, b, len(lanes))
	line := fmt.Sprintf("soak: sent=%d delivered=%d notified=%d lost=%d duplicated=%d out_of_order=%d replies_missing=%d replies_duplicated=%d kills=%d faults=%d orphans=%d max_rss=%.1fMiB duration=%s seed=%d",
		r.sent, r.delivered, r.notified, r.lost, r.duplicated, r.outOfOrder, r.repliesMissing, r.repliesDuplicated,
		stats.kills, stats.faults, orphans, float64(maxRSS)/(1<<20), dur, seed)
	fmt.Println(line)
	t.Log(line)
	for _, d := range r.details {
		t.Log(d)
	}
	if r.lost > 0 || r.duplicated > 0 || r.outOfOrder > 0 || r.repliesMissing > 0 || r.repliesDuplicated > 0 || orphans > 0 || maxRSS > soakRSSLimit {
		t.Fail()
	}
}

// soakSchedule lays out the run: a message into each lane every 6–14 s, a
// Discord fault every 4–12 s, a daemon kill every 45–90 s (down 1–8 s).
func soakSchedule(rng *rand.Rand, dur time.Duration, lanes int) []soakEvent {
	var evs []soakEvent
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	for l := range lanes {
		for at := between(0, 6*time.Second); at < dur; at += between(6*time.Second, 14*time.Second) {
			evs = append(evs, soakEvent{at: at, kind: "say", lane: l})
		}
	}
	for at := between(4*time.Second, 12*time.Second); at < dur; at += between(4*time.Second, 12*time.Second) {
		evs = append(evs, soakEvent{at: at, kind: "fault", arg: rng.IntN(7)})
	}
	// The daemon stays down 1–8 s while messages go on being posted: catch-up
	// must deliver them when it is back.
	for at := between(45*time.Second, 90*time.Second); at < dur; at += between(45*time.Second, 90*time.Second) {
		down := time.Duration(1000+rng.IntN(7000)) * time.Millisecond
		evs = append(evs, soakEvent{at: at, kind: "kill"}, soakEvent{at: at + down, kind: "start"})
	}
	slices.SortStableFunc(evs, func(a, b soakEvent) int { return int(a.at - b.at) })
	return evs
}

// soakFault injects one kind of Discord failure.
func soakFault(b *bridge, rng *rand.Rand, kind int) {
	bot := b.projects[rng.IntN(len(b.projects))].bot
	switch kind {
	case 0:
		b.srv.Fail("POST", "/channels/*/messages", []int{500, 502, 503, 504}[rng.IntN(4)], 1+rng.IntN(5))
	case 1:
		b.srv.RateLimit("POST", "/channels/*/messages", 1+rng.IntN(3), time.Duration(200+rng.IntN(1800))*time.Millisecond)
	case 2:
		b.srv.FailAfterCreate("POST", "/channels/*/messages", 502, 1)
	case 3:
		b.srv.Fail("PUT", "/channels/*/messages/*/reactions/*/@me", 500, 1+rng.IntN(3))
	case 4:
		b.srv.Fail("PATCH", "/channels/*/messages/*", 503, 1+rng.IntN(3))
	case 5:
		b.srv.DropGateway(bot)
	case 6:
		b.srv.InvalidateSession(bot)
	}
}

type soakResult struct {
	sent, delivered, notified, lost, duplicated, outOfOrder int
	repliesMissing, repliesDuplicated                       int
	missing                                                 int // not yet delivered and replied, nor notified
	details                                                 []string
}

var soakID = regexp.MustCompile(`soak-L\d+-\d{4}`)

// soakTally compares what was sent with what Claude's transcripts hold and
// what the bot posted.
func soakTally(t *testing.T, b *bridge, lanes []*soakLane) soakResult {
	t.Helper()
	received := soakReceived(t, filepath.Join(filepath.Dir(b.runtime), "home"))
	var r soakResult
	for _, l := range lanes {
		replies := map[string]int{}
		for _, m := range b.botMessages(l.channel) {
			if !strings.HasPrefix(m.Content, "ok: ") {
				continue
			}
			for _, id := range soakID.FindAllString(m.Content, -1) {
				replies[id]++
			}
		}
		last := -1
		for _, id := range received.order[l.id] {
			n, _ := strconv.Atoi(id[strings.LastIndex(id, "-")+1:])
			if n < last {
				r.outOfOrder++
				r.details = append(r.details, fmt.Sprintf("%s reached Claude after %s-%04d", id, l.id, last))
			}
			last = max(last, n)
		}
		for _, m := range l.sent {
			r.sent++
			id := m.Content
			cur, _ := b.srv.Message(m.ID)
			switch n := received.count[id]; {
			case n == 1:
				r.delivered++
			case n > 1:
				r.delivered++
				r.duplicated++
				r.details = append(r.details, fmt.Sprintf("%s reached Claude %d times", id, n))
			case cur != nil && slices.Contains(cur.Reactions, "⚠️"):
				r.notified++
				continue
			default:
				r.lost++
				r.missing++
				r.details = append(r.details, fmt.Sprintf("%s never reached Claude (reactions %v)", id, reactionsOf(cur)))
				continue
			}
			switch n := replies[id]; {
			case n == 0:
				r.repliesMissing++
				r.missing++
				r.details = append(r.details, fmt.Sprintf("%s has no reply", id))
			case n > 1:
				r.repliesDuplicated++
				r.details = append(r.details, fmt.Sprintf("%s was answered %d times", id, n))
			}
		}
	}
	return r
}

func reactionsOf(m *fakediscord.Message) []string {
	if m == nil {
		return nil
	}
	return m.Reactions
}

// soakReceipts is what Claude's transcripts say each lane typed, in order.
type soakReceipts struct {
	count map[string]int
	order map[string][]string // lane → ids in the order Claude got them
}

// soakReceived reads every transcript under home: a user entry holding a
// soak id is Claude receiving that message.
func soakReceived(t *testing.T, home string) soakReceipts {
	t.Helper()
	out := soakReceipts{count: map[string]int{}, order: map[string][]string{}}
	files, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var e struct {
				Type    string `json:"type"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Type != "user" {
				continue
			}
			for _, id := range soakTyped(e.Message.Content) {
				out.count[id]++
				lane := strings.Split(id, "-")[1]
				out.order[lane] = append(out.order[lane], id)
			}
		}
		fh.Close()
	}
	return out
}

// soakTyped returns the soak ids of a user entry's typed text (a string, or
// text blocks; tool results are not typed text).
func soakTyped(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return unique(soakID.FindAllString(s, -1))
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var ids []string
	for _, bl := range blocks {
		if bl.Type == "text" {
			ids = append(ids, soakID.FindAllString(bl.Text, -1)...)
		}
	}
	return unique(ids)
}

func unique(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// soakOrphans counts panes beyond one per lane and Claude processes beyond
// one per pane.
func soakOrphans(t *testing.T, b *bridge, lanes int) int {
	t.Helper()
	panes := b.panes()
	orphans := max(0, len(panes)-lanes)
	home := filepath.Join(filepath.Dir(b.runtime), "home")
	out, _ := exec.CommandContext(context.Background(), "pgrep", "-f", "-a", "claude").Output()
	claudes := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pid, _, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		env, err := os.ReadFile("/proc/" + pid + "/environ")
		if err == nil && strings.Contains(string(env), "HOME="+home+"\x00") && !strings.Contains(line, "ccbridge") {
			claudes++
		}
	}
	if claudes > len(panes) {
		orphans += claudes - len(panes)
	}
	return orphans
}

// daemonRSS is the running daemon's resident set, in bytes (0 when down).
func daemonRSS(b *bridge) int64 {
	if b.cmd == nil || b.cmd.Process == nil {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
