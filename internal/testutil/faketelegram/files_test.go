package faketelegram

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"testing"
)

// multipartCall sends fields and one file part as multipart/form-data.
func multipartCall(t *testing.T, s *Server, method string, fields map[string]string, fileField, fileName string, data []byte) reply {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if fileField != "" {
		fw, err := mw.CreateFormFile(fileField, fileName)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/bot"+s.Token+"/"+method, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return do(t, req)
}

// sentDocument uploads a file with sendDocument and returns its document.
func sentDocument(t *testing.T, s *Server, name string, data []byte, caption string) Document {
	t.Helper()
	r := multipartCall(t, s, "sendDocument", map[string]string{"chat_id": strconv.FormatInt(s.ChatID, 10), "caption": caption}, "document", name, data)
	if !r.OK {
		t.Fatalf("sendDocument: %d %s", r.Status, r.Description)
	}
	var m Message
	r.decode(t, &m)
	if m.Document == nil {
		t.Fatalf("no document in %s", r.Result)
	}
	return *m.Document
}

// download gets a file the way a bot does: getFile, then /file/bot<token>/<path>.
func download(t *testing.T, s *Server, fileID string) []byte {
	t.Helper()
	var f struct {
		FileID   string `json:"file_id"`
		FileSize int    `json:"file_size"`
		FilePath string `json:"file_path"`
	}
	ok(t, s, "getFile", map[string]any{"file_id": fileID}, &f)
	resp, err := http.Get(s.URL + "/file/bot" + s.Token + "/" + f.FilePath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || len(data) != f.FileSize {
		t.Fatalf("download %s: %d, %d bytes (file_size %d)", f.FilePath, resp.StatusCode, len(data), f.FileSize)
	}
	return data
}

func TestSendDocumentMultipart(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("api")
	r := multipartCall(t, s, "sendDocument", map[string]string{
		"chat_id": strconv.FormatInt(s.ChatID, 10), "message_thread_id": strconv.FormatInt(topic.MessageThreadID, 10),
		"caption": "<b>report</b>", "parse_mode": "HTML",
	}, "document", "report.txt", []byte("hello file"))
	if !r.OK {
		t.Fatalf("%d %s", r.Status, r.Description)
	}
	var m Message
	r.decode(t, &m)
	if m.Document == nil || m.Document.FileName != "report.txt" || m.Caption != "report" || len(m.CaptionEntities) != 1 {
		t.Fatalf("%+v", m)
	}
	if got := download(t, s, m.Document.FileID); string(got) != "hello file" {
		t.Fatalf("downloaded %q", got)
	}
	shown := s.Messages(s.ChatID, topic.MessageThreadID)
	if last := shown[len(shown)-1]; last.Document == nil || last.Document.FileID != m.Document.FileID {
		t.Fatalf("topic shows %+v", last)
	}
	if data, ok := s.File(m.Document.FileID); !ok || string(data) != "hello file" {
		t.Fatalf("File: %q %v", data, ok)
	}
	// attach://name names a part, as Telegram allows.
	r = multipartCall(t, s, "sendDocument", map[string]string{"chat_id": strconv.FormatInt(s.ChatID, 10), "document": "attach://blob"}, "blob", "b.bin", []byte{1, 2, 3})
	if !r.OK {
		t.Fatalf("attach://: %d %s", r.Status, r.Description)
	}
	// The recorded call names the upload, not its bytes.
	calls := s.CallsTo("sendDocument")
	if got := calls[0].Params["document"]; got != "<file report.txt, 10 bytes>" {
		t.Fatalf("recorded %q", got)
	}
}

func TestUploadRefusals(t *testing.T) {
	s := New(t)
	s.RefusalsExpected.Store(true)
	chat := strconv.FormatInt(s.ChatID, 10)
	if r := multipartCall(t, s, "sendDocument", map[string]string{"chat_id": chat}, "document", "empty.txt", nil); r.Description != "Bad Request: file must be non-empty" {
		t.Fatalf("empty file: %d %s", r.Status, r.Description)
	}
	if r := multipartCall(t, s, "sendDocument", map[string]string{"chat_id": chat}, "", "", nil); r.Description != "Bad Request: document is empty" {
		t.Fatalf("no file: %d %s", r.Status, r.Description)
	}
	// A file where the description allows none.
	if r := multipartCall(t, s, "sendMessage", map[string]string{"chat_id": chat}, "text", "t.txt", []byte("x")); r.Status != 400 {
		t.Fatalf("file as text: %d %s", r.Status, r.Description)
	}
	if r := multipartCall(t, s, "sendDocument", map[string]string{"chat_id": chat, "document": "AAAunknown"}, "", "", nil); r.Description != "Bad Request: wrong file identifier/HTTP URL specified" {
		t.Fatalf("unknown file id: %d %s", r.Status, r.Description)
	}
	refused(t, s, "getFile", map[string]any{"file_id": "nope"}, 400, "Bad Request: invalid file_id")
}

func TestInjectedFilesDownload(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("api")
	v := s.OwnerVoice(topic.MessageThreadID, []byte("OggS voice"), 3)
	if v.Voice == nil || v.Voice.Duration != 3 || v.Voice.MimeType != "audio/ogg" {
		t.Fatalf("%+v", v)
	}
	if got := download(t, s, v.Voice.FileID); string(got) != "OggS voice" {
		t.Fatalf("voice %q", got)
	}
	d := s.OwnerDocument(topic.MessageThreadID, "notes.md", []byte("# notes"), "see this")
	if d.Document == nil || d.Document.FileName != "notes.md" || d.Caption != "see this" {
		t.Fatalf("%+v", d)
	}
	if got := download(t, s, d.Document.FileID); string(got) != "# notes" {
		t.Fatalf("document %q", got)
	}
	ph := s.OwnerPhoto(0, []byte("JFIF"), "look")
	if len(ph.Photo) != 1 || ph.Caption != "look" {
		t.Fatalf("%+v", ph)
	}
	if got := download(t, s, ph.Photo[0].FileID); string(got) != "JFIF" {
		t.Fatalf("photo %q", got)
	}
	resp, err := http.Get(s.URL + "/file/bot" + s.Token + "/documents/none")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("missing file: %d", resp.StatusCode)
	}
}
