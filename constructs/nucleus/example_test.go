package nucleus_test

import (
	"fmt"

	"github.com/dynastack/dynastack/constructs/nucleus"
)

// Both Nucleus tables overload GSI1 and expire items by expire_at: audit
// entries, and on the app table the API's idempotency records.
func ExampleAuditSpec() {
	app, audit := nucleus.AppSpec(), nucleus.AuditSpec()
	fmt.Println(app.IndexNames(), app.TTLAttribute)
	fmt.Println(audit.IndexNames(), audit.TTLAttribute)
	// Output:
	// [GSI1] expire_at
	// [GSI1] expire_at
}
