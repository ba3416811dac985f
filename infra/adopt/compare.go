package adopt

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	rezagentcontract "github.com/dynastack/dynastack/constructs/rezagent/contract"
)

// Difference is one field where the template would not import the live
// table as it is. Line renders it as the command prints it.
type Difference struct {
	// Field names what differs ("key schema", "index CallerIdIndex", …).
	Field string
	// Template and Table are the two values, as the person compares them.
	Template, Table string
	// Effect is what CloudFormation would refuse, or what import would
	// record without applying (drift).
	Effect string
	// SafeWay is how to make the two agree before importing.
	SafeWay string
}

// Line is the difference on one line.
func (d Difference) Line() string {
	return fmt.Sprintf("%s: template %s, table %s: %s; safe way: %s", d.Field, d.Template, d.Table, d.Effect, d.SafeWay)
}

// Result is a comparison's outcome.
type Result struct {
	Differences []Difference
	// NotChecked names what the input did not carry, or what no
	// describe output shows; it never fails the comparison.
	NotChecked []string
	// Checked counts the fields compared.
	Checked int
}

// Compare compares the live table with the template's table field by field.
func Compare(t Target, live *Live) Result {
	c := &comparer{t: t, l: live.Table, name: live.Table.TableName}
	c.status()
	c.replicas()
	c.removal()
	c.keys()
	c.lsis()
	c.gsis()
	c.billing()
	c.warmThroughput()
	c.stream()
	c.encryption()
	c.tableClass()
	c.deletionProtection()
	if live.TTL != nil {
		c.ttl(*live.TTL)
	} else {
		c.notChecked("time to live (add the output of aws dynamodb describe-time-to-live --table-name %s)", c.name)
	}
	if live.Backups != nil {
		c.pitr(*live.Backups)
	} else {
		c.notChecked("point-in-time recovery (add the output of aws dynamodb describe-continuous-backups --table-name %s)", c.name)
	}
	if live.Tags != nil {
		c.tags(*live.Tags)
	} else {
		c.notChecked("tags (add the output of aws dynamodb list-tags-of-resource --resource-arn %s)", orArn(live.Table.TableArn))
	}
	// What no describe output shows.
	c.notChecked("contributor insights, resource-based policy and auto scaling policies: none of the four outputs shows them")
	if t.ContributorInsightsInTarget {
		c.notChecked("the template enables contributor insights: compare aws dynamodb describe-contributor-insights --table-name %s by hand", c.name)
	}
	if t.ResourcePolicyInTarget {
		c.notChecked("the template sets a resource-based policy: compare aws dynamodb get-resource-policy --resource-arn %s by hand", orArn(live.Table.TableArn))
	}
	if region := arnRegion(live.Table.TableArn); region != "" {
		c.notChecked("region: the table is in %s; deploy the stack %s/%s to that account and Region (dynastack's stacks are environment-agnostic unless infra/config pins Account/Region)", region, t.Stage, t.Stack)
	}
	return Result{Differences: c.diffs, NotChecked: c.skipped, Checked: c.checked}
}

type comparer struct {
	t       Target
	l       TableDescription
	name    string
	diffs   []Difference
	skipped []string
	checked int
}

func (c *comparer) diff(field, template, table, effect, safe string) {
	c.diffs = append(c.diffs, Difference{Field: field, Template: template, Table: table, Effect: effect, SafeWay: safe})
}

func (c *comparer) notChecked(format string, args ...any) {
	c.skipped = append(c.skipped, fmt.Sprintf(format, args...))
}

// override names where a stage's table setting lives.
func (c *comparer) override(field string) string {
	return fmt.Sprintf("set %s in Tables[config.TableKey(%q, %q)] of stage %s in infra/config (then make snapshots)", field, c.t.Stack, c.t.ConstructID, c.t.Stage)
}

func (c *comparer) status() {
	c.checked++
	if s := c.l.TableStatus; s != "" && s != "ACTIVE" {
		c.diff("table status", "ACTIVE", s, "CloudFormation imports only an ACTIVE table", "wait until the table's update finishes (aws dynamodb wait table-exists), then describe it again")
	}
}

func (c *comparer) replicas() {
	c.checked++
	var regions []string
	for _, r := range c.l.Replicas {
		regions = append(regions, r.RegionName)
	}
	if len(regions) > 0 {
		c.diff("replicas", "one replica, the stack's Region", strings.Join(regions, ", "),
			"the template lists one replica, so the first update after import would delete the table's replicas in the other Regions with their data",
			"adopt a single-Region table: remove the other replicas first (aws dynamodb update-table --replica-updates Delete=…), or leave this table out of dynastack")
	}
}

func (c *comparer) removal() {
	c.checked++
	if c.t.DeletionPolicy != "Retain" {
		c.diff("removal policy", orNone(c.t.DeletionPolicy), "a live table with data",
			"once imported, deleting the stack or the table's construct deletes the live table and its items",
			c.override("RemovalPolicy: RETAIN")+" before importing")
	}
}

func (c *comparer) keys() {
	c.checked++
	if got := renderKeys(c.l.KeySchema, liveTypes(c.l)); got != c.t.Keys {
		c.diff("key schema", c.t.Keys, got,
			"a table's key cannot change: CloudFormation would have to replace the table, which it refuses under a fixed name (and a new name is a new, empty table)",
			"none in place: this spec cannot adopt this table; copy its items into a table created by the stack (export to S3, then import), or keep the table out of dynastack")
	}
}

func (c *comparer) lsis() {
	c.checked++
	live := indexes(c.l.LocalSecondaryIndexes, liveTypes(c.l))
	for _, n := range union(live, c.t.LSIs) {
		l, inLive := live[n]
		t, inT := c.t.LSIs[n]
		if inLive && inT && l.Keys == t.Keys && l.Projection == t.Projection {
			continue
		}
		c.diff("local index "+n, indexText(t, inT), indexText(l, inLive),
			"local secondary indexes exist only from a table's creation: CloudFormation would have to replace the table, which it refuses under a fixed name",
			"none in place: this spec cannot adopt this table; copy its items into a table created by the stack, or keep the table out of dynastack")
	}
}

// gsis compares the global indexes. DynamoDB takes one index creation or
// deletion per UpdateTable (and CloudFormation one per stack update), so
// the live changes are numbered: deletions first (a changed index is
// deleted before it is created again under its name), then creations.
func (c *comparer) gsis() {
	c.checked++
	live := indexes(c.l.GlobalSecondaryIndexes, liveTypes(c.l))
	var deletes, creates []string
	for _, n := range union(live, c.t.GSIs) {
		l, inLive := live[n]
		t, inT := c.t.GSIs[n]
		switch {
		case inLive && !inT:
			deletes = append(deletes, n)
		case inT && !inLive:
			creates = append(creates, n)
		case l.Keys != t.Keys || l.Projection != t.Projection:
			deletes = append(deletes, n)
			creates = append(creates, n)
		}
	}
	total := len(deletes) + len(creates)
	step := func(n string, ops []string, offset int) string {
		return fmt.Sprintf("live update %d of %d", offset+slices.Index(ops, n)+1, total)
	}
	for _, n := range union(live, c.t.GSIs) {
		l, inLive := live[n]
		t, inT := c.t.GSIs[n]
		field := "index " + n
		switch {
		case inLive && !inT:
			safe := fmt.Sprintf("delete it on the live table first if nothing queries it (%s: aws dynamodb update-table --table-name %s --global-secondary-index-updates 'Delete={IndexName=%s}', then wait until the table is ACTIVE), or declare it in the table's spec (a schema change) before importing", step(n, deletes, 0), c.name, n)
			if c.t.Stack == rezagentcontract.Name && n == rezagentcontract.IndexMessageTypeCreatedDate {
				safe = fmt.Sprintf("keep it: set RezAgentMessageTypeIndex for stage %s in infra/config (then make snapshots), or delete it on the live table (%s) if nothing queries it", c.t.Stage, step(n, deletes, 0))
			}
			c.diff(field, "none", indexText(l, true),
				"the template has no such index, so the first deploy after import that touches the indexes deletes it",
				safe)
		case inT && !inLive:
			c.diff(field, indexText(t, true), "none",
				"import does not create it: queries on it fail, and CloudFormation believes it exists",
				fmt.Sprintf("create it on the live table first (%s: aws dynamodb update-table --table-name %s --attribute-definitions … --global-secondary-index-updates 'Create={IndexName=%s,…}' with the template's keys, projection and on-demand maximums; wait until the index is ACTIVE: it backfills from the items)", step(n, creates, len(deletes)), c.name, n))
		case l.Keys != t.Keys || l.Projection != t.Projection:
			c.diff(field, indexText(t, true), indexText(l, true),
				"an index's keys and projection cannot change in place, and CloudFormation replaces an index with two index operations in one update, which DynamoDB refuses",
				fmt.Sprintf("on the live table delete it (%s), then create it as the template says (%s; it backfills before it is ACTIVE), then import", step(n, deletes, 0), step(n, creates, len(deletes))))
		default:
			if c.t.BillingMode == "PAY_PER_REQUEST" {
				c.onDemandCaps(field, t.MaxRead, t.MaxWrite, c.liveIndexCaps(n))
			}
		}
	}
}

func (c *comparer) liveIndexCaps(name string) *OnDemandThroughput {
	for _, g := range c.l.GlobalSecondaryIndexes {
		if g.IndexName == name {
			return g.OnDemandThroughput
		}
	}
	return nil
}

func (c *comparer) billing() {
	c.checked++
	mode := "PROVISIONED"
	if c.l.BillingModeSummary != nil && c.l.BillingModeSummary.BillingMode != "" {
		mode = c.l.BillingModeSummary.BillingMode
	}
	if mode != c.t.BillingMode {
		c.diff("billing mode", c.t.BillingMode, mode,
			"import records the template's billing mode without applying it: the table keeps being billed as "+mode+" while CloudFormation believes otherwise",
			fmt.Sprintf("switch the live table first (aws dynamodb update-table --table-name %s --billing-mode %s; DynamoDB allows a switch to provisioned once per 24 hours), or %s", c.name, c.t.BillingMode, c.override("Billing (Mode "+mode+", with the table's capacity)")))
		return
	}
	if mode == "PAY_PER_REQUEST" {
		c.onDemandCaps("table", c.t.MaxRead, c.t.MaxWrite, c.l.OnDemandThroughput)
		return
	}
	var rcu, wcu int64
	if p := c.l.ProvisionedThroughput; p != nil {
		rcu, wcu = p.ReadCapacityUnits, p.WriteCapacityUnits
	}
	if rcu != c.t.ReadCapacity {
		c.diff("read capacity", strconv.FormatInt(c.t.ReadCapacity, 10), strconv.FormatInt(rcu, 10),
			"import records the template's capacity without applying it",
			fmt.Sprintf("set it on the live table first (aws dynamodb update-table --table-name %s --provisioned-throughput ReadCapacityUnits=%d,WriteCapacityUnits=%d), or %s", c.name, c.t.ReadCapacity, wcu, c.override("Billing.ReadCapacity")))
	}
	if wcu < c.t.WriteMin || wcu > c.t.WriteMax {
		c.diff("write capacity", fmt.Sprintf("auto scaled %d to %d", c.t.WriteMin, c.t.WriteMax), strconv.FormatInt(wcu, 10),
			"the table's write capacity is outside the template's auto scaling range",
			c.override("Billing.WriteCapacity")+" to cover it, or set the live capacity within the range first")
	}
}

// onDemandCaps compares on-demand maximums; -1 or nothing means none.
func (c *comparer) onDemandCaps(what string, maxRead, maxWrite int64, live *OnDemandThroughput) {
	var lr, lw int64
	if live != nil {
		lr, lw = max(live.MaxReadRequestUnits, 0), max(live.MaxWriteRequestUnits, 0)
	}
	if lr == maxRead && lw == maxWrite {
		return
	}
	cmd := fmt.Sprintf("aws dynamodb update-table --table-name %s --on-demand-throughput MaxReadRequestUnits=%d,MaxWriteRequestUnits=%d", c.name, maxRead, maxWrite)
	if what != "table" {
		idx := strings.TrimPrefix(what, "index ")
		cmd = fmt.Sprintf("aws dynamodb update-table --table-name %s --global-secondary-index-updates 'Update={IndexName=%s,OnDemandThroughput={MaxReadRequestUnits=%d,MaxWriteRequestUnits=%d}}'", c.name, idx, maxRead, maxWrite)
	}
	safe := "set them on the live table first (" + cmd + ")"
	if lr > 0 && lw > 0 {
		safe += ", or " + c.override(fmt.Sprintf("Billing (MaxReadRequestUnits %d, MaxWriteRequestUnits %d)", lr, lw))
	}
	c.diff(what+" on-demand maximums", caps(maxRead, maxWrite), caps(lr, lw),
		"import records the template's maximums without applying them: the table keeps its own while CloudFormation believes otherwise, until a deploy changes the value",
		safe)
}

// warmThroughput: the template's warm throughput is a floor (DynamoDB never
// lowers it), so only a live table colder than the template differs.
func (c *comparer) warmThroughput() {
	if c.t.WarmRead == 0 && c.t.WarmWrite == 0 {
		return
	}
	c.checked++
	var r, w int64
	if lw := c.l.WarmThroughput; lw != nil {
		r, w = lw.ReadUnitsPerSecond, lw.WriteUnitsPerSecond
	}
	if r >= c.t.WarmRead && w >= c.t.WarmWrite {
		return
	}
	c.diff("warm throughput", fmt.Sprintf("read %d/write %d", c.t.WarmRead, c.t.WarmWrite), fmt.Sprintf("read %d/write %d", r, w),
		"import records the template's warm throughput without applying it: the table is colder than CloudFormation believes",
		fmt.Sprintf("raise it on the live table first (aws dynamodb update-table --table-name %s --warm-throughput ReadUnitsPerSecond=%d,WriteUnitsPerSecond=%d; billed once)", c.name, max(r, c.t.WarmRead), max(w, c.t.WarmWrite)))
}

func (c *comparer) stream() {
	c.checked++
	live := ""
	if s := c.l.StreamSpecification; s != nil && s.StreamEnabled {
		live = s.StreamViewType
	}
	if live == c.t.Stream {
		return
	}
	switch {
	case live == "":
		c.diff("stream", c.t.Stream, "none",
			"import does not enable it: the stack's stream consumers have no stream to read (their event source mapping fails to create)",
			fmt.Sprintf("enable it on the live table first (aws dynamodb update-table --table-name %s --stream-specification StreamEnabled=true,StreamViewType=%s)", c.name, c.Stream()))
	case c.t.Stream == "":
		c.diff("stream", "none", live,
			"the stream stays on after import, outside CloudFormation's view (its old consumers keep reading; a later deploy that sets a stream fails)",
			fmt.Sprintf("once nothing reads it, disable it on the live table (aws dynamodb update-table --table-name %s --stream-specification StreamEnabled=false), or keep it: %s", c.name, c.override("Stream: table."+viewConst(live))))
	default:
		c.diff("stream", c.t.Stream, live,
			"a stream's view type cannot change in place",
			fmt.Sprintf("on the live table disable the stream, then enable it with %s (a new stream ARN: the old consumers must be moved), or %s", c.t.Stream, c.override("Stream: table."+viewConst(live))))
	}
}

// Stream is the template's view type (for messages).
func (c *comparer) Stream() string { return c.t.Stream }

func (c *comparer) encryption() {
	c.checked++
	live, key := awsOwned, ""
	if s := c.l.SSEDescription; s != nil && (s.Status == "ENABLED" || s.Status == "ENABLING" || s.Status == "UPDATING") {
		live, key = "KMS", s.KMSMasterKeyArn
	}
	switch {
	case c.t.Encryption == awsOwned && live == awsOwned:
	case c.t.Encryption != awsOwned && live == "KMS":
		if c.t.Encryption == customerManaged && c.t.KMSKey != "" && c.t.KMSKey != key {
			c.diff("encryption key", c.t.KMSKey, key,
				"import records the template's key without applying it: the table stays encrypted under its own key",
				"point the table's EncryptionKey override at the table's key, or switch the live table's key first (aws dynamodb update-table --sse-specification Enabled=true,SSEType=KMS,KMSMasterKeyId=…)")
			return
		}
		c.notChecked("whether KMS key %s is the template's (%s): describe-table shows the key's ARN only; aws kms describe-key --key-id %s shows KeyManager AWS for the aws/dynamodb key", key, c.t.Encryption, key)
	case live == "KMS":
		c.diff("encryption", c.t.Encryption, "KMS key "+key,
			"import records AWS-owned encryption without applying it: the table stays under the KMS key (and its grants) while CloudFormation believes otherwise",
			fmt.Sprintf("%s, or switch the live table to the AWS-owned key first (aws dynamodb update-table --table-name %s --sse-specification Enabled=false)", c.override("Encryption: table.AWSManaged (or CustomerManaged with EncryptionKey)"), c.name))
	default:
		c.diff("encryption", c.t.Encryption, awsOwned,
			"import records KMS encryption without applying it: the table stays under the AWS-owned key while CloudFormation believes otherwise",
			fmt.Sprintf("switch the live table first (aws dynamodb update-table --table-name %s --sse-specification Enabled=true,SSEType=KMS), or %s where the spec allows it", c.name, c.override("Encryption: table.AWSOwned")))
	}
}

func (c *comparer) tableClass() {
	c.checked++
	live := "STANDARD"
	if s := c.l.TableClassSummary; s != nil && s.TableClass != "" {
		live = s.TableClass
	}
	if live != c.t.TableClass {
		c.diff("table class", c.t.TableClass, live,
			"import records the template's class without applying it: storage and requests stay billed at the table's class",
			fmt.Sprintf("switch the live table first (aws dynamodb update-table --table-name %s --table-class %s; DynamoDB allows two class changes per 30 days); dynastack has no table class setting", c.name, c.t.TableClass))
	}
}

func (c *comparer) deletionProtection() {
	if c.l.DeletionProtectionEnabled == nil {
		c.notChecked("deletion protection (describe-table's DeletionProtectionEnabled is missing: use AWS CLI 2.9 or later)")
		return
	}
	c.checked++
	if live := *c.l.DeletionProtectionEnabled; live != c.t.DeletionProtection {
		flag := map[bool]string{true: "--deletion-protection-enabled", false: "--no-deletion-protection-enabled"}[c.t.DeletionProtection]
		c.diff("deletion protection", onOff(c.t.DeletionProtection), onOff(live),
			"import records the template's setting without applying it",
			fmt.Sprintf("set it on the live table first (aws dynamodb update-table --table-name %s %s), or %s", c.name, flag, c.override(fmt.Sprintf("DeletionProtection: %v (where the stage policy allows it)", live))))
	}
}

func (c *comparer) ttl(d TimeToLiveDescription) {
	c.checked++
	on := d.TimeToLiveStatus == "ENABLED" || d.TimeToLiveStatus == "ENABLING"
	attr := ""
	if on {
		attr = d.AttributeName
	}
	want := ""
	if c.t.TTLEnabled {
		want = c.t.TTLAttribute
	}
	if attr == want {
		return
	}
	switch {
	case want == "":
		c.diff("time to live", "none", "on "+attr,
			"items keep expiring by "+attr+" after import, outside CloudFormation's view; dynastack's spec has no TTL",
			fmt.Sprintf("disable it on the live table if nothing relies on it (aws dynamodb update-time-to-live --table-name %s --time-to-live-specification Enabled=false,AttributeName=%s)", c.name, attr))
	case attr == "":
		c.diff("time to live", "on "+want, "off",
			"import does not enable it: items never expire while CloudFormation believes they do",
			fmt.Sprintf("enable it on the live table first (aws dynamodb update-time-to-live --table-name %s --time-to-live-specification Enabled=true,AttributeName=%s)", c.name, want))
	default:
		c.diff("time to live", "on "+want, "on "+attr,
			"DynamoDB deletes items by "+attr+" while the code writes "+want+", and CloudFormation cannot move TTL to another attribute in one update",
			fmt.Sprintf("on the live table disable TTL on %s, wait until it is DISABLED (up to an hour; one TTL change per hour), then enable it on %s", attr, want))
	}
}

func (c *comparer) pitr(b ContinuousBackupsDescription) {
	c.checked++
	d := b.PointInTimeRecoveryDescription
	on := d.PointInTimeRecoveryStatus == "ENABLED"
	days := 0
	if on {
		days = d.RecoveryPeriodInDays
		if days == 0 {
			days = 35
		}
	}
	want := 0
	if c.t.PITR {
		want = c.t.RecoveryPeriodDays
	}
	if days == want {
		return
	}
	c.diff("point-in-time recovery", recovery(want), recovery(days),
		"import records the template's setting without applying it: the table keeps its own recovery while CloudFormation believes otherwise",
		fmt.Sprintf("set it on the live table first (aws dynamodb update-continuous-backups --table-name %s --point-in-time-recovery-specification PointInTimeRecoveryEnabled=%v%s), or %s", c.name, want > 0, map[bool]string{true: fmt.Sprintf(",RecoveryPeriodInDays=%d", want), false: ""}[want > 0],
			c.override("PointInTimeRecovery/RecoveryPeriodDays (where the stage policy allows it)")))
}

func (c *comparer) tags(tags []Tag) {
	c.checked++
	live := map[string]string{}
	var reserved []string
	for _, t := range tags {
		if strings.HasPrefix(t.Key, "aws:") {
			reserved = append(reserved, t.Key)
			continue
		}
		live[t.Key] = t.Value
	}
	if len(reserved) > 0 {
		c.notChecked("tags %s: AWS sets and owns aws: tags (CloudFormation replaces its own on import)", strings.Join(slices.Sorted(slices.Values(reserved)), ", "))
	}
	for _, k := range union(live, c.t.Tags) {
		l, inLive := live[k]
		t, inT := c.t.Tags[k]
		switch {
		case inLive && inT && l == t:
		case !inLive:
			c.diff("tag "+k, t, "none",
				"import does not add the template's tags: cost allocation and tag-based policies miss the table until a deploy changes its tags",
				fmt.Sprintf("tag the live table first (aws dynamodb tag-resource --resource-arn %s --tags Key=%s,Value=%s)", orArn(c.l.TableArn), k, t))
		case !inT:
			c.diff("tag "+k, "none", l,
				"the template does not carry the table's tag, so the first deploy that changes the tags removes it",
				c.override(fmt.Sprintf("Tags: {%q: %q}", k, l))+", or untag the live table if nothing relies on the tag")
		default:
			c.diff("tag "+k, t, l,
				"import records the template's value without applying it",
				fmt.Sprintf("retag the live table first (aws dynamodb tag-resource --resource-arn %s --tags Key=%s,Value=%s)", orArn(c.l.TableArn), k, t))
		}
	}
}

func liveTypes(l TableDescription) map[string]string {
	types := map[string]string{}
	for _, d := range l.AttributeDefinitions {
		types[d.AttributeName] = d.AttributeType
	}
	return types
}

func indexes(list []IndexDescription, types map[string]string) map[string]Index {
	out := map[string]Index{}
	for _, ix := range list {
		out[ix.IndexName] = Index{Name: ix.IndexName, Keys: renderKeys(ix.KeySchema, types), Projection: projection(ix.Projection.ProjectionType, ix.Projection.NonKeyAttributes)}
	}
	return out
}

func indexText(ix Index, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("(%s; projection %s)", ix.Keys, ix.Projection)
}

func union[A, B any](a map[string]A, b map[string]B) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	return slices.Sorted(slices.Values(keys))
}

func caps(r, w int64) string {
	if r == 0 && w == 0 {
		return "none"
	}
	return fmt.Sprintf("read %s/write %s", orNoMax(r), orNoMax(w))
}

func orNoMax(n int64) string {
	if n == 0 {
		return "no maximum"
	}
	return strconv.FormatInt(n, 10)
}

func recovery(days int) string {
	if days == 0 {
		return "off"
	}
	return fmt.Sprintf("on (%d days)", days)
}

func onOff(b bool) string { return map[bool]string{true: "on", false: "off"}[b] }

func orNone(s string) string {
	if s == "" {
		return "(none: Delete)"
	}
	return s
}

func orArn(arn string) string {
	if arn == "" {
		return "<table ARN>"
	}
	return arn
}

// viewConst is table.StreamView's Go name for a view type.
func viewConst(view string) string {
	switch view {
	case "NEW_AND_OLD_IMAGES":
		return "NewAndOldImages"
	case "NEW_IMAGE":
		return "NewImage"
	case "OLD_IMAGE":
		return "OldImage"
	case "KEYS_ONLY":
		return "KeysOnly"
	}
	return view
}

// arnRegion is the Region of a table ARN.
func arnRegion(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) > 3 && parts[0] == "arn" {
		return parts[3]
	}
	return ""
}
