package nucleus_test

import (
	"fmt"

	"github.com/dynastack/dynastack/constructs/nucleus"
)

// Both Nucleus tables overload GSI1; only the audit table expires items.
func ExampleAuditSpec() {
	app, audit := nucleus.AppSpec(), nucleus.AuditSpec()
	fmt.Println(app.IndexNames(), app.TTLAttribute == "")
	fmt.Println(audit.IndexNames(), audit.TTLAttribute)
	// Output:
	// [GSI1] true
	// [GSI1] expire_at
}
