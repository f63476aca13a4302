package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Codex CLI 0.171.0 keeps each conversation as a rollout,
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl
// (agents.md §1.5), in date folders rather than per project: the folder a
// conversation ran in is its first line's (session_meta) cwd. A listing
// reads, newest first, a bounded head of each rollout for that cwd and the
// first prompt, and a bounded tail of the ones it keeps.

// AgentCodex marks a Conversation read from a Codex rollout.
const AgentCodex = "codex"

// headBytesCodex bounds a rollout's head: Codex writes its instructions
// (session_meta, some 20 KB) and developer messages (about as much again)
// before the first prompt.
const headBytesCodex = 256 << 10

// CodexSessionsDir is where Codex keeps its rollouts under its home
// ($CODEX_HOME, else ~/.codex).
func CodexSessionsDir(codexHome string) string { return filepath.Join(codexHome, "sessions") }

// codexID is a Codex thread id (a UUID), as a rollout's name ends.
var codexID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// rolloutID is the thread id a rollout's file name ends with, if it is
// one.
func rolloutID(name string) (string, bool) {
	base, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || !strings.HasPrefix(base, "rollout-") || len(base) < 36 {
		return "", false
	}
	id := base[len(base)-36:]
	return id, codexID.MatchString(id)
}

// rollouts are every rollout under sessions with its modification time.
func rollouts(sessions string) ([]file, error) {
	var files []file
	err := filepath.WalkDir(sessions, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == sessions {
				return err
			}
			return nil // an unreadable folder: the others still list
		}
		if d.IsDir() {
			return nil
		}
		if _, ok := rolloutID(d.Name()); !ok {
			return nil
		}
		if info, err := d.Info(); err == nil {
			files = append(files, file{path, info.ModTime()})
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return files, err
}

// ListCodex returns up to limit Codex conversations held in tree (the
// directory or below it; "" for every directory), newest first.
func ListCodex(sessions, tree string, limit int) ([]Conversation, error) {
	if tree != "" {
		tree = filepath.Clean(tree)
	}
	files, err := rollouts(sessions)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	var out []Conversation
	for _, f := range files {
		if len(out) == limit {
			break
		}
		if cwd, ok := rolloutCwd(f.path); ok && !within(cwd, tree) {
			continue // another folder's: its head is not read
		}
		c, err := ReadCodex(f.path)
		if err != nil || c.FirstPrompt == "" || !within(c.Cwd, tree) {
			continue
		}
		c.Modified = f.mod
		out = append(out, c)
	}
	return out, nil
}

// FindCodex returns the Codex conversation with a thread id in tree (""
// for any directory), if Codex has it.
func FindCodex(sessions, tree, id string) (Conversation, bool) {
	if !codexID.MatchString(id) {
		return Conversation{}, false
	}
	if tree != "" {
		tree = filepath.Clean(tree)
	}
	matches, _ := filepath.Glob(filepath.Join(sessions, "*", "*", "*", "rollout-*-"+id+".jsonl"))
	for _, m := range matches {
		c, err := ReadCodex(m)
		if err != nil || c.FirstPrompt == "" || !within(c.Cwd, tree) {
			continue
		}
		if info, err := os.Stat(m); err == nil {
			c.Modified = info.ModTime()
		}
		return c, true
	}
	return Conversation{}, false
}

// cwdField is session_meta's cwd, which Codex writes within the first few
// hundred bytes of a rollout, before its instructions.
var cwdField = regexp.MustCompile(`"cwd":("(?:[^"\\]|\\.)*")`)

// rolloutCwd reads the folder a rollout's conversation ran in from its
// first bytes, so a listing skips other folders' conversations without
// reading their heads; ok is false when those bytes do not hold it.
func rolloutCwd(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, 4<<10)
	n, _ := f.Read(buf)
	first, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	if !bytes.Contains(first, []byte(`"session_meta"`)) {
		return "", false
	}
	m := cwdField.FindSubmatch(first)
	var cwd string
	if m == nil || json.Unmarshal(m[1], &cwd) != nil {
		return "", false
	}
	return cwd, true
}

// rolloutLine is a rollout line, reduced to what a listing reads.
type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type string `json:"type"`
		// session_meta.
		ID           string `json:"id"`
		Cwd          string `json:"cwd"`
		ThreadSource string `json:"thread_source"`
		// event_msg item_completed.
		Item struct {
			Type    string `json:"type"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
	} `json:"payload"`
}

// ReadCodex reads one rollout's head (its folder, the first prompt) and
// tail (the last prompt, the messages after it, the turns).
func ReadCodex(path string) (Conversation, error) {
	id, _ := rolloutID(filepath.Base(path))
	c := Conversation{Path: path, ID: id, AgentName: AgentCodex}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return c, err
	}
	size := info.Size()
	head, err := readAt(f, 0, min(size, headBytesCodex))
	if err != nil {
		return c, err
	}
	hl := lines(head, false)
	if size > headBytesCodex && len(hl) > 0 {
		hl = hl[:len(hl)-1] // cut
	}
	for i, l := range hl {
		e, ok := decodeRollout(l, i == 0)
		if !ok {
			continue
		}
		if e.Type == "session_meta" {
			// Codex's own threads (a title's) are no conversation of the
			// person's.
			if s := e.Payload.ThreadSource; s != "" && s != "user" {
				return c, nil
			}
			c.Cwd = e.Payload.Cwd
			continue
		}
		if p, ok := rolloutPrompt(e); ok {
			c.FirstPrompt = p
			break
		}
	}
	if c.FirstPrompt == "" {
		return c, nil
	}
	for n := int64(tailBytes); ; n *= 4 {
		tail, err := readAt(f, max(0, size-n), min(size, n))
		if err != nil {
			return c, err
		}
		c = readRolloutTail(c, tail, size > n)
		if c.LastPrompt != "" || size <= n || n >= tailMax {
			break
		}
	}
	return c, nil
}

// readRolloutTail reads the last prompt, the messages after it and the
// turns from the end of a rollout (cut: its first line is partial).
func readRolloutTail(c Conversation, tail []byte, cut bool) Conversation {
	c.LastPrompt, c.LastReply, c.Turns = "", "", 0
	for _, l := range lines(tail, cut) {
		e, ok := decodeRollout(l, false)
		if !ok {
			continue
		}
		if p, ok := rolloutPrompt(e); ok {
			c.Turns++
			c.LastPrompt, c.LastReply = p, ""
			continue
		}
		if e.Payload.Type == "item_completed" && e.Payload.Item.Type == "AgentMessage" {
			if t := itemText(e); t != "" {
				if c.LastReply != "" {
					c.LastReply += "\n\n"
				}
				c.LastReply += t
			}
		}
	}
	if !cut {
		// The whole rollout was read: the prompts counted are all of them.
		return c
	}
	// A cut tail counts only its own prompts: at least one.
	c.Turns = max(c.Turns, 1)
	return c
}

// decodeRollout decodes the lines a listing reads: the session_meta
// (meta) and event_msg items; most lines, some of them large, are not
// decoded.
func decodeRollout(line []byte, meta bool) (rolloutLine, bool) {
	var e rolloutLine
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return e, false
	}
	if !(meta && bytes.Contains(line, []byte(`"session_meta"`))) && !bytes.Contains(line, []byte(`"item_completed"`)) {
		return e, false
	}
	return e, json.Unmarshal(line, &e) == nil
}

// rolloutPrompt returns the text of a prompt a person typed: Codex's
// UserMessage items, less what a hook or Codex itself wrote as the user
// (<hook_prompt …>, tags).
func rolloutPrompt(e rolloutLine) (string, bool) {
	if e.Type != "event_msg" || e.Payload.Type != "item_completed" || e.Payload.Item.Type != "UserMessage" {
		return "", false
	}
	s := itemText(e)
	if s == "" || strings.HasPrefix(s, "<") {
		return "", false
	}
	return s, true
}

func itemText(e rolloutLine) string {
	var parts []string
	for _, c := range e.Payload.Item.Content {
		if t := strings.TrimSpace(c.Text); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}
