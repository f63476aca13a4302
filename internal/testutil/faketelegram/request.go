package faketelegram

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxUpload is the Bot API's limit for files a bot sends (50 MB).
const maxUpload = 50 << 20

// readParams reads a call's parameters the way the Bot API server does: the
// query string, then a JSON object, an url-encoded form or a multipart form.
// A JSON body's values that are not strings become their JSON text, so
// {"message_thread_id":"42"} and {"message_thread_id":42} read alike, as on
// Telegram.
func readParams(r *http.Request) (params, error) {
	p := params{values: map[string]string{}, files: map[string]*upload{}}
	for k, v := range r.URL.Query() {
		p.values[k] = v[0]
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return p, nil
	}
	mt, mp, err := mime.ParseMediaType(ct)
	if err != nil {
		return p, fmt.Errorf("unsupported Content-Type %q", ct)
	}
	switch mt {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(r.Body, maxUpload))
		if err != nil {
			return p, fmt.Errorf("read the body: %w", err)
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return p, nil
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return p, fmt.Errorf("can't parse JSON object")
		}
		for k, raw := range obj {
			var s string
			switch {
			case json.Unmarshal(raw, &s) == nil:
				p.values[k] = s
			case string(raw) == "null":
			default:
				p.values[k] = string(raw)
			}
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return p, fmt.Errorf("can't parse the form: %w", err)
		}
		for k, v := range r.PostForm {
			p.values[k] = v[0]
		}
	case "multipart/form-data":
		if mp["boundary"] == "" {
			return p, fmt.Errorf("multipart body without a boundary")
		}
		mr, err := r.MultipartReader()
		if err != nil {
			return p, fmt.Errorf("can't parse the multipart body: %w", err)
		}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return p, fmt.Errorf("can't parse the multipart body: %w", err)
			}
			data, err := io.ReadAll(io.LimitReader(part, maxUpload+1))
			if err != nil {
				return p, fmt.Errorf("read a multipart part: %w", err)
			}
			if len(data) > maxUpload {
				return p, fmt.Errorf("file is too big")
			}
			if part.FileName() != "" {
				p.files[part.FormName()] = &upload{name: part.FileName(), data: data}
			} else {
				p.values[part.FormName()] = string(data)
			}
		}
	default:
		return p, fmt.Errorf("unsupported Content-Type %q", mt)
	}
	return p, nil
}

// record is the parameters as a Call keeps them.
func (p params) record() map[string]string {
	out := make(map[string]string, len(p.values)+len(p.files))
	for k, v := range p.values {
		out[k] = v
	}
	for k, f := range p.files {
		out[k] = fmt.Sprintf("<file %s, %d bytes>", f.name, len(f.data))
	}
	return out
}

// str, int and bool read a parameter already checked against its type.
func (p params) str(name string) string { return p.values[name] }

func (p params) int(name string) int64 {
	var n int64
	_, _ = fmt.Sscan(strings.TrimSpace(p.values[name]), &n)
	return n
}

func (p params) bool(name string) bool {
	b, _ := parseBool(p.values[name])
	return b
}

// object decodes a JSON parameter already checked against its type.
func (p params) object(name string, v any) bool {
	s, ok := p.values[name]
	if !ok {
		return false
	}
	return json.Unmarshal([]byte(s), v) == nil
}
