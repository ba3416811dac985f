package adopt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Live is a live table as the AWS CLI describes it: the output of
// `aws dynamodb describe-table`, with the outputs of
// `describe-time-to-live`, `describe-continuous-backups` and
// `list-tags-of-resource` merged in when given. Each output has its own
// top-level key, so the files can be passed side by side or merged into
// one object (jq -s add a.json b.json …).
type Live struct {
	Table TableDescription
	// TTL, Backups and Tags are nil when their output was not given: the
	// comparison lists them as not checked.
	TTL     *TimeToLiveDescription
	Backups *ContinuousBackupsDescription
	Tags    *[]Tag
}

// TableDescription is the part of describe-table's Table that adoption
// compares; field names are the API's.
type TableDescription struct {
	TableName              string
	TableArn               string
	TableStatus            string
	AttributeDefinitions   []AttributeDefinition
	KeySchema              []KeyElement
	BillingModeSummary     *struct{ BillingMode string }
	ProvisionedThroughput  *Throughput
	OnDemandThroughput     *OnDemandThroughput
	GlobalSecondaryIndexes []IndexDescription
	LocalSecondaryIndexes  []IndexDescription
	StreamSpecification    *struct {
		StreamEnabled  bool
		StreamViewType string
	}
	SSEDescription *struct {
		Status          string
		SSEType         string
		KMSMasterKeyArn string
	}
	TableClassSummary *struct{ TableClass string }
	// DeletionProtectionEnabled is absent from the output of older CLIs:
	// then it is not checked.
	DeletionProtectionEnabled *bool
	Replicas                  []struct{ RegionName string }
	WarmThroughput            *struct {
		ReadUnitsPerSecond, WriteUnitsPerSecond int64
	}
}

// AttributeDefinition names a key attribute's type (S, N or B).
type AttributeDefinition struct{ AttributeName, AttributeType string }

// KeyElement is one element of a key schema (HASH or RANGE).
type KeyElement struct{ AttributeName, KeyType string }

// Throughput is provisioned capacity.
type Throughput struct{ ReadCapacityUnits, WriteCapacityUnits int64 }

// OnDemandThroughput are on-demand maximums; -1 (or absent) is none.
type OnDemandThroughput struct{ MaxReadRequestUnits, MaxWriteRequestUnits int64 }

// IndexDescription is a GSI or LSI of describe-table.
type IndexDescription struct {
	IndexName  string
	KeySchema  []KeyElement
	Projection struct {
		ProjectionType   string
		NonKeyAttributes []string
	}
	IndexStatus           string
	ProvisionedThroughput *Throughput
	OnDemandThroughput    *OnDemandThroughput
}

// TimeToLiveDescription is describe-time-to-live's answer.
type TimeToLiveDescription struct {
	TimeToLiveStatus string
	AttributeName    string
}

// ContinuousBackupsDescription is describe-continuous-backups' answer.
type ContinuousBackupsDescription struct {
	ContinuousBackupsStatus        string
	PointInTimeRecoveryDescription *struct {
		PointInTimeRecoveryStatus string
		RecoveryPeriodInDays      int
	}
}

// Tag is one tag of list-tags-of-resource.
type Tag struct{ Key, Value string }

// acceptedKeys are the top-level keys of the four CLI outputs.
var acceptedKeys = []string{"ContinuousBackupsDescription", "NextToken", "Table", "Tags", "TimeToLiveDescription"}

// ParseLive reads one or more CLI outputs (each a JSON object, or one
// object merging several). Every problem is an *InputError naming the file
// and the fix.
func ParseLive(files map[string][]byte) (*Live, error) {
	merged := map[string]json.RawMessage{}
	from := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(files[name], &obj); err != nil {
			return nil, inputErr("%s is not a JSON object: %v; pass the output of aws dynamodb describe-table --output json", name, err)
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !slices.Contains(acceptedKeys, k) {
				return nil, inputErr("%s: top-level key %q is none of describe-table, describe-time-to-live, describe-continuous-backups or list-tags-of-resource's (%s)", name, k, strings.Join(acceptedKeys, ", "))
			}
			if prev, dup := from[k]; dup {
				return nil, inputErr("%s and %s both carry %q: pass each CLI output once", prev, name, k)
			}
			merged[k], from[k] = obj[k], name
		}
	}
	live := &Live{}
	raw, ok := merged["Table"]
	if !ok {
		return nil, inputErr("no \"Table\" object in %s: the output of aws dynamodb describe-table --table-name <name> is required", strings.Join(slices.Sorted(maps.Keys(files)), ", "))
	}
	if err := strictDecode(raw, &live.Table); err != nil {
		return nil, inputErr("%s: Table is not describe-table's shape: %v", from["Table"], err)
	}
	if live.Table.TableName == "" || len(live.Table.KeySchema) == 0 {
		return nil, inputErr("%s: Table has no TableName or KeySchema: pass the whole output of aws dynamodb describe-table", from["Table"])
	}
	if raw, ok := merged["TimeToLiveDescription"]; ok {
		live.TTL = &TimeToLiveDescription{}
		if err := strictDecode(raw, live.TTL); err != nil || live.TTL.TimeToLiveStatus == "" {
			return nil, inputErr("%s: TimeToLiveDescription is not describe-time-to-live's shape (%v)", from["TimeToLiveDescription"], err)
		}
	}
	if raw, ok := merged["ContinuousBackupsDescription"]; ok {
		live.Backups = &ContinuousBackupsDescription{}
		if err := strictDecode(raw, live.Backups); err != nil || live.Backups.PointInTimeRecoveryDescription == nil {
			return nil, inputErr("%s: ContinuousBackupsDescription has no PointInTimeRecoveryDescription (%v): pass the output of aws dynamodb describe-continuous-backups", from["ContinuousBackupsDescription"], err)
		}
	}
	if raw, ok := merged["Tags"]; ok {
		var tags []Tag
		if err := strictDecode(raw, &tags); err != nil {
			return nil, inputErr("%s: Tags is not list-tags-of-resource's shape: %v", from["Tags"], err)
		}
		live.Tags = &tags
	}
	if raw, ok := merged["NextToken"]; ok && string(raw) != "null" && string(raw) != `""` {
		return nil, inputErr("%s: list-tags-of-resource returned a NextToken, so the tags are incomplete: run it without --max-items (the CLI then follows every page)", from["NextToken"])
	}
	return live, nil
}

// strictDecode decodes fields it knows and ignores the rest (the CLI adds
// fields over time); only a wrong type is an error.
func strictDecode(raw json.RawMessage, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(dst)
}

// InputError is unreadable or unusable input: exit code 2.
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

func inputErr(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}
