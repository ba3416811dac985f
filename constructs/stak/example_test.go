package stak_test

import (
	"fmt"

	"github.com/dynastack/dynastack/constructs/stak"
	"github.com/dynastack/dynastack/constructs/table"
)

// The inbox stream cannot be switched off by a stage: the counters depend
// on it.
func ExampleInboxSpec() {
	_, err := table.Resolve(stak.InboxSpec(), table.Dev, table.Overrides{Stream: new(table.StreamView)})
	fmt.Println(stak.InboxSpec().Stream, err != nil)
	// Output: NEW_AND_OLD_IMAGES true
}
