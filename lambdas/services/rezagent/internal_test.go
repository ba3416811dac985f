package rezagent

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// updateHeadroom must cover the most a status change sequence can add to an
// item after Create: compare a fresh message with the same message after
// processing, a billion redeliveries and a failure with the longest error.
func TestUpdateHeadroom(t *testing.T) {
	ts := Timestamp(time.Now())
	fresh := Message{Summary: Summary{MessageID: "3f1d7e3a-0000-4000-8000-000000000000", CreatedDate: ts, CreatedBy: "s", Stage: "dev",
		MessageType: "t", Status: StatusQueued, UpdatedDate: ts, CorrelationID: "c", TTL: 1 << 40}, Payload: Payload{}}
	worst := fresh
	worst.Status = StatusProcessing
	worst.ProcessingStartedAt, worst.ProcessingCompletedAt = ts, ts
	worst.ErrorMessage = strings.Repeat("€", MaxErrorMessageBytes/3)
	worst.NotificationID = strings.Repeat("n", MaxNotificationIDLen) // never with error_message, counted anyway
	worst.RetryCount = 1 << 40
	worst.LeaseToken = strings.Repeat("l", maxLeaseTokenLen) // removed on completion, counted anyway
	worst.LeaseUntil = 1 << 50
	size := func(m Message) int {
		item, err := attributevalue.MarshalMap(m)
		if err != nil {
			t.Fatal(err)
		}
		return ddb.ItemSize(item)
	}
	if grow := size(worst) - size(fresh); grow > updateHeadroom {
		t.Errorf("status changes can add %d bytes; updateHeadroom is %d", grow, updateHeadroom)
	}
}

func TestCeilMicro(t *testing.T) {
	base := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	for ns, want := range map[int]int{0: 0, 1: 1000, 999: 1000, 1000: 1000, 1001: 2000} {
		if got := ceilMicro(base.Add(time.Duration(ns))).Sub(base); got != time.Duration(want) {
			t.Errorf("ceilMicro(+%dns) = +%v, want +%dns", ns, got, want)
		}
	}
}

// TestSummaryProjection: a listing's projection, written out, reads every
// attribute of a Summary that the API serves (json not "-") and no other,
// each placeholder named in summaryNames and every name used.
func TestSummaryProjection(t *testing.T) {
	var served []string
	st := reflect.TypeFor[Summary]()
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Tag.Get("json") == "-" {
			continue
		}
		served = append(served, strings.Split(f.Tag.Get("dynamodbav"), ",")[0])
	}
	var projected []string
	for _, p := range strings.Split(summaryProjection, ", ") {
		name, ok := summaryNames[p]
		if !ok {
			t.Errorf("placeholder %s of the projection is not in summaryNames", p)
		}
		projected = append(projected, name)
	}
	if len(projected) != len(summaryNames) {
		t.Errorf("the projection uses %d of the %d names", len(projected), len(summaryNames))
	}
	slices.Sort(served)
	slices.Sort(projected)
	if !slices.Equal(served, projected) {
		t.Errorf("projected %v, served %v", projected, served)
	}
	for _, name := range []string{"#stage", "#status", "#type", "#created", "#ttl"} {
		if _, ok := summaryNames[name]; !ok {
			t.Errorf("%s (a key condition's or the filter's) is not in summaryNames", name)
		}
	}
}
