// Package history reads Claude Code's own record of past conversations
// (~/.claude/projects/<escaped cwd>/<session id>.jsonl) to list a
// project's recent ones. It reads only what a listing needs: the files'
// modification times for the order, then, for the newest few, a bounded
// tail (last prompt, last reply, turn count) and a bounded head (the first
// prompt). The cost does not grow with the length of conversations, and
// only with their number through one stat per file.
package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Read bounds.
const (
	tailBytes = 64 << 10
	headBytes = 32 << 10
	tailMax   = 1 << 20
)

// Conversation is one past conversation as a listing shows it.
type Conversation struct {
	ID          string // Claude session id
	Path        string
	Cwd         string
	FirstPrompt string
	LastPrompt  string
	LastReply   string
	Turns       int    // prompts typed in it
	AgentName   string // "codex" for a Codex rollout; "" for Claude's transcript
	Modified    time.Time
}

// ProjectsDir is where Claude Code keeps its transcripts under its config
// dir (~/.claude, or $CLAUDE_CONFIG_DIR).
func ProjectsDir(configDir string) string { return filepath.Join(configDir, "projects") }

// Escape is how Claude Code names a directory's folder under projects/:
// every character other than a letter or digit becomes "-".
func Escape(dir string) string {
	b := []byte(dir)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

type file struct {
	path string
	mod  time.Time
}

// List returns up to limit conversations held in tree (the directory or
// below it; "" for every directory), newest first.
func List(projects, tree string, limit int) ([]Conversation, error) {
	if tree != "" {
		tree = filepath.Clean(tree)
	}
	esc := Escape(tree)
	dirs, err := os.ReadDir(projects)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []file
	for _, d := range dirs {
		// The escaping is lossy: a folder is a candidate here and its
		// transcript's cwd decides.
		if !d.IsDir() || (tree != "" && d.Name() != esc && !strings.HasPrefix(d.Name(), esc+"-")) {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(projects, d.Name()))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			files = append(files, file{filepath.Join(projects, d.Name(), e.Name()), info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	var out []Conversation
	for _, f := range files {
		if len(out) == limit {
			break
		}
		c, err := Read(f.path)
		if err != nil || c.FirstPrompt == "" || !within(c.Cwd, tree) {
			continue
		}
		c.Modified = f.mod
		out = append(out, c)
	}
	return out, nil
}

// within reports whether dir is tree or below it; every dir is within "".
func within(dir, tree string) bool {
	return tree == "" || dir == tree || strings.HasPrefix(dir, tree+"/")
}

// Find returns the conversation with a session id in tree ("" for any
// directory), if Claude has it.
func Find(projects, tree, id string) (Conversation, bool) {
	if id == "" || strings.ContainsAny(id, "/\\*?[") || strings.HasPrefix(id, ".") {
		return Conversation{}, false
	}
	folders := "*"
	if tree != "" {
		folders = Escape(filepath.Clean(tree)) + "*"
	}
	matches, _ := filepath.Glob(filepath.Join(projects, folders, id+".jsonl"))
	for _, m := range matches {
		c, err := Read(m)
		if err == nil && c.FirstPrompt != "" {
			if info, err := os.Stat(m); err == nil {
				c.Modified = info.ModTime()
			}
			return c, true
		}
	}
	return Conversation{}, false
}

// entry is a transcript line, reduced to what a listing reads.
type entry struct {
	Type        string `json:"type"`
	Cwd         string `json:"cwd"`
	SessionID   string `json:"sessionId"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	Message     struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	TurnPosition struct {
		PromptIndex int `json:"promptIndex"`
	} `json:"turnPosition"`
}

// Read reads one transcript's head and tail.
func Read(path string) (Conversation, error) {
	f, err := os.Open(path)
	if err != nil {
		return Conversation{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Conversation{}, err
	}
	c := Conversation{Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	size := info.Size()
	// The tail grows (to tailMax) only while it holds no typed prompt: a
	// last turn of many tool calls.
	for n := int64(tailBytes); ; n *= 4 {
		tail, err := readAt(f, max(0, size-n), min(size, n))
		if err != nil {
			return c, err
		}
		c = readTail(c, tail, size > n)
		if c.LastPrompt != "" || size <= n || n >= tailMax {
			break
		}
	}
	if c.FirstPrompt == "" {
		head, err := readAt(f, 0, min(size, headBytes))
		if err != nil {
			return c, err
		}
		for _, line := range lines(head, false) {
			if e, ok := decode(line); ok && !e.IsSidechain {
				if p, ok := typedPrompt(e); ok {
					c.FirstPrompt = p
					break
				}
			}
		}
	}
	return c, nil
}

// readTail reads the last prompt, the reply after it and the turn count
// from the end of a transcript (cut: its first line is partial).
func readTail(c Conversation, tail []byte, cut bool) Conversation {
	prompts := 0
	c.LastPrompt, c.LastReply, c.Turns = "", "", 0
	for _, line := range lines(tail, cut) {
		e, ok := decode(line)
		if !ok || e.IsSidechain {
			continue
		}
		if e.Cwd != "" {
			c.Cwd = e.Cwd
		}
		if p, ok := typedPrompt(e); ok {
			prompts++
			c.LastPrompt, c.LastReply = p, ""
			c.Turns = max(c.Turns, e.TurnPosition.PromptIndex)
			if c.FirstPrompt == "" && !cut {
				c.FirstPrompt = p
			}
		}
		if e.Type == "assistant" {
			if t := text(e.Message.Content); t != "" {
				if c.LastReply != "" {
					c.LastReply += "\n\n"
				}
				c.LastReply += t
			}
		}
	}
	c.Turns = max(c.Turns, prompts)
	return c
}

func readAt(f *os.File, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	m, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:m], nil
}

// lines splits a chunk into lines, dropping a cut first line (a tail) and
// a cut last one.
func lines(b []byte, cutFirst bool) [][]byte {
	if cutFirst {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			return nil
		}
	}
	return bytes.Split(b, []byte("\n"))
}

func decode(line []byte) (entry, bool) {
	var e entry
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return e, false
	}
	// Cheap filter: only user and assistant lines matter.
	if !bytes.Contains(line, []byte(`"type":"user"`)) && !bytes.Contains(line, []byte(`"type":"assistant"`)) {
		var probe struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal(line, &probe) == nil {
			e.Cwd = probe.Cwd
			return e, true
		}
		return e, false
	}
	return e, json.Unmarshal(line, &e) == nil
}

// typedPrompt returns the text of a prompt a person typed (not a tool
// result, not a command's output or other injected text).
func typedPrompt(e entry) (string, bool) {
	if e.Type != "user" || e.IsMeta || e.Message.Role != "user" {
		return "", false
	}
	c := bytes.TrimSpace(e.Message.Content)
	var s string
	if len(c) > 0 && c[0] == '"' {
		if json.Unmarshal(c, &s) != nil {
			return "", false
		}
	} else {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &blocks) != nil {
			return "", false
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				return "", false
			}
			if b.Type == "text" && s == "" {
				s = b.Text
			}
		}
	}
	s = strings.TrimSpace(s)
	// Claude records an interrupt as a user line "[Request interrupted by
	// user]" (or "… for tool use]"): nobody typed it.
	if s == "" || strings.HasPrefix(s, "<") || strings.HasPrefix(s, "[Request interrupted") {
		return "", false
	}
	return s, true
}

func text(content json.RawMessage) string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
