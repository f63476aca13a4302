package faketelegram

import (
	"reflect"
	"strings"
	"testing"
)

// ParseText answers as sendMessage does for a text and its parse_mode.
func TestParseTextAsSendMessage(t *testing.T) {
	for _, tc := range []struct {
		text, mode, plain, err string
		ents                   []Entity
	}{
		{text: "  <b>hi</b> &lt;x&gt;\n", mode: "HTML", plain: "hi <x>", ents: []Entity{{Type: "bold", Length: 2}}},
		{text: "*b*", mode: "MarkdownV2", plain: "b", ents: []Entity{{Type: "bold", Length: 1}}},
		{text: "a < b", mode: "HTML", err: `Bad Request: can't parse entities: Unsupported start tag "" at byte offset 2`},
		{text: "<b> </b>\n", mode: "HTML", err: "Bad Request: message text is empty"},
		{text: strings.Repeat("😀", 2048) + "<i>x</i>", mode: "HTML", err: "Bad Request: message is too long"},
		{text: strings.Repeat("😀", 2048), mode: "HTML", plain: strings.Repeat("😀", 2048)},
		{text: "x", mode: "BBCode", err: "Bad Request: unsupported parse_mode"},
	} {
		plain, ents, err := ParseText(tc.text, tc.mode)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.err || plain != tc.plain || !reflect.DeepEqual(ents, tc.ents) {
			t.Errorf("ParseText(%.40q, %s) = %.40q %+v %q, want %.40q %+v %q", tc.text, tc.mode, plain, ents, got, tc.plain, tc.ents, tc.err)
		}
	}
}
