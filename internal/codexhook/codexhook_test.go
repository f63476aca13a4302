package codexhook

import (
	"reflect"
	"testing"
)

const rollout = "testdata/rollout.jsonl"

func TestFinalReplyIsEveryMessageAfterTheLastToolCallOfTheTurn(t *testing.T) {
	for _, tc := range []struct {
		turn, last, want string
		found            bool
	}{
		{"t1", "Done.", "probe reply one\n\nDone.", true},
		// Another turn ending the same way is not this one.
		{"t2", "Done.", "Second turn, first message.\n\nDone.", true},
		// Not written yet.
		{"t1", "Something else.", "", false},
		{"t3", "Done.", "", false},
		// No last message to match: the turn's messages as they stand.
		{"t1", "", "probe reply one\n\nDone.", true},
	} {
		got, found, err := FinalReply(rollout, tc.turn, tc.last, 1)
		if err != nil || found != tc.found || got != tc.want {
			t.Errorf("FinalReply(%s, %q) = %q, %v, %v; want %q, %v", tc.turn, tc.last, got, found, err, tc.want, tc.found)
		}
	}
	if _, _, err := FinalReply("testdata/none.jsonl", "t1", "x", 1); err == nil {
		t.Error("no error for a missing rollout")
	}
}

// A message injected into a running turn continues it (agents.md §1.7):
// the turn has a reply per message, each ended by its own Stop with the
// same turn_id. Each reply is what answers its message, never the one
// before; and a Stop read after the rollout went on still finds its own.
func TestAnInjectedMessageStartsTheTurnsNextReply(t *testing.T) {
	const injected = "testdata/rollout-injected.jsonl"
	for _, tc := range []struct {
		last, want string
		reply      int
	}{
		{"ok: latency probe 9", "ok: latency probe 9", 1},
		{"ok: latency probe 10", "Looking.\n\nok: latency probe 10", 2},
	} {
		got, found, err := FinalReply(injected, "t9", tc.last, tc.reply)
		if err != nil || !found || got != tc.want {
			t.Errorf("FinalReply(%q) = %q, %v, %v; want %q", tc.last, got, found, err, tc.want)
		}
		n, found, err := ReplyOf(injected, "t9", tc.last)
		if err != nil || !found || n != tc.reply {
			t.Errorf("ReplyOf(%q) = %d, %v, %v; want %d", tc.last, n, found, err, tc.reply)
		}
	}
	// The reply to probe 9 never posted (one Stop ended both): it goes out
	// with the reply to probe 10.
	if got, found, err := FinalReply(injected, "t9", "ok: latency probe 10", 1); err != nil || !found || got != "ok: latency probe 9\n\nLooking.\n\nok: latency probe 10" {
		t.Errorf("FinalReply(from 1) = %q, %v, %v", got, found, err)
	}
	if n, found, err := ReplyOf(injected, "t9", "not written yet"); err != nil || found {
		t.Errorf("ReplyOf(not written) = %d, %v, %v", n, found, err)
	}
	if n, found, err := ReplyOf(rollout, "t1", "Done."); err != nil || !found || n != 1 {
		t.Errorf("ReplyOf(t1 after tool calls) = %d, %v, %v; want 1", n, found, err)
	}
}

func TestTextBeforeIsWhatTheModelWroteBeforeTheCall(t *testing.T) {
	msgs, found, err := TextBefore(rollout, "call_fake_1_0")
	if err != nil || !found || !reflect.DeepEqual(msgs, []Message{{ID: "msg_fake_1_0", Text: "Running echo."}}) {
		t.Errorf("first call: %+v, %v, %v", msgs, found, err)
	}
	// Right after another call: nothing before it.
	if msgs, found, err := TextBefore(rollout, "call_fake_2_0"); err != nil || !found || len(msgs) != 0 {
		t.Errorf("second call: %+v, %v, %v", msgs, found, err)
	}
	if _, found, _ := TextBefore(rollout, "call_later"); found {
		t.Error("a call not in the rollout found")
	}
}

func TestLastUsageIsTheLastTokenCount(t *testing.T) {
	u, ok, err := LastUsage(rollout)
	if err != nil || !ok || u != (Usage{Model: "gpt-fake", Tokens: 51680, Window: 258400}) {
		t.Errorf("LastUsage = %+v, %v, %v", u, ok, err)
	}
}

// rolloutError has two turns, as Codex 0.171.0 wrote them: t1 answered,
// t2 failed on an HTTP 400 from the fake Responses API, t3 on a 429 (their
// task_complete lines as Codex wrote them); a last line is half written.
const rolloutError = "testdata/rollout-error.jsonl"

func TestTurnEndReadsAnAPIErrorFromTaskComplete(t *testing.T) {
	for _, tc := range []struct {
		turn  string
		want  Failure
		ended bool
	}{
		{"t1", Failure{}, true},
		// OpenAI's error body: its message and its type.
		{"t2", Failure{Message: "fake bad request", Kind: "invalid_request_error"}, true},
		// Codex's own words.
		{"t3", Failure{Message: "exceeded retry limit, last status: 429 Too Many Requests"}, true},
		// Not ended yet; the half-written line is not read.
		{"t4", Failure{}, false},
	} {
		f, ended, next, err := TurnEnd(rolloutError, tc.turn, 0)
		if err != nil || ended != tc.ended || f != tc.want {
			t.Errorf("TurnEnd(%s) = %+v, %v, %v; want %+v, %v", tc.turn, f, ended, err, tc.want, tc.ended)
		}
		if !tc.ended && next != 1360 {
			t.Errorf("TurnEnd(%s) read to %d, want 1360 (the end of the last whole line)", tc.turn, next)
		}
	}
	// Read up to the turn's end; from there on only what follows is read.
	_, _, next, _ := TurnEnd(rolloutError, "t1", 0)
	if _, ended, _, err := TurnEnd(rolloutError, "t1", next); err != nil || ended || next == 0 {
		t.Errorf("t1 ended again after offset %d: %v, %v", next, ended, err)
	}
	if f, ended, _, _ := TurnEnd(rolloutError, "t2", next); !ended || f.Message != "fake bad request" {
		t.Errorf("t2 from offset %d: %+v, %v", next, f, ended)
	}
	if _, _, _, err := TurnEnd("testdata/none.jsonl", "t1", 0); err == nil {
		t.Error("no error for a missing rollout")
	}
}
