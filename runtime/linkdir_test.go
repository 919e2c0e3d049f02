package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestLinkDirDeclaration: WithLinkDir clears linkDirSize bytes from the
// marker on, so save.c's g_link_dir must be that long and start with that
// marker; a shorter array would have the copy overwrite what follows it.
func TestLinkDirDeclaration(t *testing.T) {
	c := strconv.QuoteToASCII(linkDirMarker)  // "\x7fWEAVE-LINK-DIR\x7f"
	c = strings.ReplaceAll(c, `\x7f`, `\177`) // as save.c spells it
	want := fmt.Sprintf("g_link_dir[%d] __attribute__((used)) = %s;", linkDirSize, c)
	if !strings.Contains(Source(), want) {
		t.Errorf("the runtime does not declare %s", want)
	}
}
