package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pollEvery is the live stream's fallback tick: a transcript change that
// fsnotify misses (a network filesystem, a watch limit reached) still
// reaches the page within it. Every tick also re-checks the link, so a
// revoked or expired link's stream ends.
const pollEvery = 100 * time.Millisecond

// keepAlive is how often an idle stream sends a comment, so proxies do not
// close it.
const keepAlive = 20 * time.Second

// recheckEvery is how often a stream asks whether its session's transcript
// changed (a new Claude conversation after /clear, or the first one).
const recheckEvery = 2 * time.Second

// maxStreamRead bounds one read of new transcript bytes.
const maxStreamRead = 1 << 20

// serveEvents streams the transcript's new lines from ?from= (or the
// Last-Event-ID a reconnecting browser sends) as server-sent events: each
// "line" event is one line's HTML, its id the offset after it.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request, s Session, tok string) {
	from, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64)
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		from, err = strconv.ParseInt(id, 10, 64)
	}
	if err != nil || from < 0 {
		http.Error(w, "bad stream offset", http.StatusBadRequest)
		return
	}
	select {
	case h.streams <- struct{}{}:
		defer func() { <-h.streams }()
	default:
		http.Error(w, "too many live views", http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if err := rc.Flush(); err != nil {
		return
	}
	wake := make(chan struct{}, 1)
	if wt, err := fsnotify.NewWatcher(); err == nil && s.Transcript != "" {
		defer wt.Close()
		if wt.Add(filepath.Dir(s.Transcript)) == nil {
			go forward(wt, s.Transcript, wake)
		}
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	idle, checked := time.Now(), time.Now()
	for {
		if _, ok := h.valid(tok, KindSession); !ok {
			_, _ = io.WriteString(w, "event: end\ndata: \n\n")
			_ = rc.Flush()
			return
		}
		if time.Since(checked) >= h.recheck {
			checked = time.Now()
			if now, ok := h.opt.Sessions.Session(s.Key); !ok || now.Transcript != s.Transcript {
				// The page shows another conversation now: it reloads.
				_, _ = io.WriteString(w, "event: reload\ndata: \n\n")
				_ = rc.Flush()
				return
			}
		}
		sent, err := h.sendNew(w, s, &from)
		if err != nil {
			_, _ = io.WriteString(w, "event: end\ndata: \n\n")
			_ = rc.Flush()
			return
		}
		if !sent && time.Since(idle) > keepAlive {
			_, _ = io.WriteString(w, ": keep-alive\n\n")
			sent = true
		}
		if sent {
			idle = time.Now()
			if rc.Flush() != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		case <-tick.C:
		}
	}
}

// forward turns the transcript's write events into wake-ups; the watch is
// on the folder, as atomic renames replace the file's inode.
func forward(wt *fsnotify.Watcher, name string, wake chan<- struct{}) {
	for ev := range wt.Events {
		if ev.Name != name {
			continue
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	}
}

var errTruncated = errors.New("transcript shrank")

// sendNew writes an event per complete line added since *from and moves
// *from past them; sent reports whether anything was written.
func (h *Handler) sendNew(w io.Writer, s Session, from *int64) (sent bool, err error) {
	f, err := os.Open(s.Transcript)
	if err != nil {
		return false, nil // not there yet: Claude has not started
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, nil
	}
	if fi.Size() < *from {
		return false, errTruncated
	}
	for fi.Size() > *from {
		buf := make([]byte, min(fi.Size()-*from, maxStreamRead))
		n, err := f.ReadAt(buf, *from)
		if err != nil && !errors.Is(err, io.EOF) {
			return sent, fmt.Errorf("read transcript: %w", err)
		}
		buf = buf[:n]
		last := bytes.LastIndexByte(buf, '\n')
		if last < 0 {
			if int64(n) == maxStreamRead {
				// One line longer than a read: skip it whole.
				*from += int64(n)
				continue
			}
			return sent, nil // a line still being written
		}
		off := *from
		for line := range bytes.SplitSeq(buf[:last+1], []byte{'\n'}) {
			off += int64(len(line)) + 1
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var b strings.Builder
			for _, it := range lineItems(line, h.opt.Redact) {
				if err := pages().ExecuteTemplate(&b, "item", it); err != nil {
					return sent, err
				}
			}
			if b.Len() == 0 {
				continue
			}
			writeEvent(w, "line", strconv.FormatInt(min(off, *from+int64(last)+1), 10), b.String())
			sent = true
		}
		*from += int64(last) + 1
	}
	return sent, nil
}

func writeEvent(w io.Writer, event, id, data string) {
	var b strings.Builder
	b.WriteString("event: " + event + "\nid: " + id + "\n")
	// A bare CR would end an event line too: as a character reference it
	// stays what it was in the HTML.
	for l := range strings.SplitSeq(strings.ReplaceAll(data, "\r", "&#13;"), "\n") {
		b.WriteString("data: " + l + "\n")
	}
	b.WriteString("\n")
	_, _ = io.WriteString(w, b.String())
}
