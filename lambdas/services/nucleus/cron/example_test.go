package cron_test

import (
	"fmt"
	"github.com/dynastack/dynastack/lambdas/services/nucleus/cron"
	"time"
)

// A daily 02:30 in New York around the spring change: on the day 02:30
// does not exist, it fires when the gap ends.
func ExampleExpr_Fires() {
	c, err := cron.Parse("30 2 * * *")
	if err != nil {
		panic(err)
	}
	ny, _ := time.LoadLocation("America/New_York")
	from := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	for _, t := range c.Fires(ny, from, from.Add(48*time.Hour)) {
		fmt.Println(t.In(ny).Format("Mon 2006-01-02 15:04 MST"))
	}
	// Output:
	// Sun 2026-03-08 03:00 EDT
	// Mon 2026-03-09 02:30 EDT
}
