package agenticpm_test

import (
	"fmt"

	"github.com/dynastack/dynastack/constructs/agenticpm"
	"github.com/dynastack/dynastack/constructs/table"
)

// Point-in-time recovery is on in dev too, because the document enables it
// without naming a stage.
func ExampleSpec() {
	p, _ := table.Resolve(agenticpm.Spec(), table.Dev, table.Overrides{})
	fmt.Println(p.PointInTimeRecovery, p.RecoveryPeriodDays)
	// Output: true 35
}
