package panel

import (
	"context"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// With the web view on, the panel offers 🌐 beside Refresh: a control (the
// router answers the owner who clicks, privately, with the links), never
// a link itself: the panel channel may be one every member reads. It
// adds no row, so the panel keeps within Discord's five.
func TestPanelOffersTheWebViewWithoutPostingALink(t *testing.T) {
	for _, n := range []int{1, 4, 6} {
		p, _ := newPanel(t, n)
		off := p.Render(context.Background(), "home")
		p.Web = true
		on := p.Render(context.Background(), "home")
		if len(on.Rows) != len(off.Rows) {
			t.Errorf("%d projects: %d rows with the web view, %d without", n, len(on.Rows), len(off.Rows))
		}
		last := on.Rows[len(on.Rows)-1].Buttons
		if len(last) != 2 || !strings.HasSuffix(last[1].CustomID, "|web") || last[1].Link() {
			t.Errorf("%d projects: the last row is %+v", n, last)
		}
		for _, row := range off.Rows {
			for _, b := range row.Buttons {
				if strings.HasSuffix(b.CustomID, "|web") {
					t.Errorf("%d projects: 🌐 with the web view off", n)
				}
			}
		}
		for _, row := range on.Rows {
			for _, b := range row.Buttons {
				if b.Link() {
					t.Errorf("%d projects: the panel posts the link %s", n, b.URL)
				}
			}
		}
		if err := chat.CheckMessage(on); err != nil {
			t.Errorf("%d projects: %v", n, err)
		}
	}
}
