package stak

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// MaxPublishWriteUnits bounds the DynamoDB write units one publish may
// consume. A message to users is one transaction per recipient, and a
// transactional write costs 2 units per KB of the item plus 2 per counter
// it updates: 100 recipients of a body at MaxBodyBytes cost about 3,800
// units (13,000 before the body cap), most of a second of the prod table's
// write cap (table.ProdMaxWriteRequestUnits = 5000). At 1000, 100
// recipients still fit with items of up to 3 KB, and 26 with a body at the
// cap; a bigger message goes to fewer recipients per request.
const MaxPublishWriteUnits = 1000

// ErrPublishTooCostly is returned by Publish when the message, times its
// recipients, would exceed MaxPublishWriteUnits. Nothing is written.
var ErrPublishTooCostly = api.NewKind("stak: publish exceeds the write units of one request", http.StatusRequestEntityTooLarge, api.CodeTooLarge,
	func(_ string, err error) string {
		return strings.TrimPrefix(err.Error(), "stak: ") + "; split the recipients over several publishes or shorten the message"
	})

// transactWriteUnits is what one transactional write of an item of size
// bytes costs: 2 units per started KB.
func transactWriteUnits(size int) int { return 2 * ((size + 1023) / 1024) }

// publishWriteUnits is what delivering m to each of uids (or to the public
// partition, with no uids) costs: per copy the message item (as deliver
// writes it) and its counters (c#* and c#<category>, each under 1 KB).
func publishWriteUnits(m Message, uids []string) (int, error) {
	counters := 1
	if m.Taxonomy.Category != "" {
		counters = 2
	}
	targets := uids
	if len(targets) == 0 {
		targets = []string{m.UID}
	}
	total := 0
	for _, uid := range targets {
		cp := m
		cp.UID = uid
		if len(uids) > 0 {
			cp.Header.Audiences.UIDs = []string{uid}
		}
		item, err := attributevalue.MarshalMap(cp)
		if err != nil {
			return 0, fmt.Errorf("stak: marshal message: %w", err)
		}
		p := Partition{Tenant: cp.Tenant, UID: uid, Inbox: cp.Inbox}
		total += transactWriteUnits(ddb.ItemSize(withKey(item, p.PK(), contract.PrefixMessage+cp.Header.ID, ""))) + counters*transactWriteUnits(1)
	}
	return total, nil
}

// checkFanOut refuses a publish whose write units exceed
// MaxPublishWriteUnits, naming the figures.
func checkFanOut(m Message, uids []string) error {
	units, err := publishWriteUnits(m, uids)
	if err != nil {
		return err
	}
	if units > MaxPublishWriteUnits {
		n := max(len(uids), 1)
		return fmt.Errorf("%w: %d recipient(s) cost %d write units, at most %d per publish (about %d each)", ErrPublishTooCostly, n, units, MaxPublishWriteUnits, units/n)
	}
	return nil
}
