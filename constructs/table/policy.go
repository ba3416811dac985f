package table

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
)

// ErrInvalid is matched by every validation error of this package.
var ErrInvalid = errors.New("invalid table configuration")

// Stage is a deployment environment. Its name is part of every physical table
// name, so it is restricted to the known stages.
type Stage string

// The stages dynastack deploys.
const (
	Dev  Stage = "dev"
	Stg  Stage = "stage"
	Prod Stage = "prod"
)

// Stages lists every stage in promotion order.
func Stages() []Stage { return []Stage{Dev, Stg, Prod} }

// ParseStage validates a stage name.
func ParseStage(s string) (Stage, error) {
	st := Stage(s)
	if slices.Contains(Stages(), st) {
		return st, nil
	}
	return "", fmt.Errorf("%w: stage %q is not one of dev, stage, prod: add it to table.Stages and give it a DefaultPolicy", ErrInvalid, s)
}

// Encryption selects who owns the key that encrypts a table at rest.
type Encryption string

// Encryption options.
const (
	// AWSOwned uses a key DynamoDB owns: no cost, no audit trail.
	AWSOwned Encryption = "AWS_OWNED"
	// AWSManaged uses the account's aws/dynamodb KMS key: KMS request cost,
	// key use visible in CloudTrail.
	AWSManaged Encryption = "AWS_MANAGED"
	// CustomerManaged uses Policy.EncryptionKey, which the team controls.
	CustomerManaged Encryption = "CUSTOMER_MANAGED"
)

// BillingMode selects how DynamoDB charges for throughput.
type BillingMode string

// Billing modes.
const (
	// OnDemand charges per request; no capacity planning.
	OnDemand BillingMode = "PAY_PER_REQUEST"
	// Provisioned charges for reserved capacity: cheaper only for steady
	// traffic. Writes are autoscaled, as TableV2 (a global table) requires.
	Provisioned BillingMode = "PROVISIONED"
)

// Billing is the throughput configuration of a table.
type Billing struct {
	// Mode of billing.
	//
	// Default: OnDemand.
	Mode BillingMode
	// MaxReadRequestUnits and MaxWriteRequestUnits cap on-demand throughput
	// of the table and of each of its indexes, a cost ceiling against a
	// runaway client: requests beyond it are throttled. Only with OnDemand;
	// at most MaxOnDemandRequestUnits. An on-demand table is never uncapped:
	// 0 in an override keeps the stage default.
	//
	// Default: the stage's caps (Dev/Stage/ProdMaxRead/WriteRequestUnits).
	MaxReadRequestUnits, MaxWriteRequestUnits int
	// ReadCapacity is the fixed read capacity, and WriteCapacity the maximum
	// of the autoscaled write capacity. Both required with Provisioned, and
	// only then.
	//
	// Default: 0.
	ReadCapacity, WriteCapacity int
}

// ContributorInsights selects what CloudWatch Contributor Insights records
// for a table: its most accessed and most throttled keys, the first thing
// to look at when one partition is hot.
type ContributorInsights string

// Contributor Insights modes.
const (
	// NoContributorInsights records nothing.
	NoContributorInsights ContributorInsights = ""
	// AccessedAndThrottledKeys records every request's key: CloudWatch
	// charges per event, so it costs with every request.
	AccessedAndThrottledKeys ContributorInsights = "ACCESSED_AND_THROTTLED_KEYS"
	// ThrottledKeys records throttled requests only: it costs nothing until
	// a key is throttled, then names it.
	ThrottledKeys ContributorInsights = "THROTTLED_KEYS"
)

// WarmThroughput is the throughput a table serves at once, without
// DynamoDB's gradual scaling: set it before a known peak (a launch, a
// migration). It can be raised, never lowered, and each raise is billed
// once. Zero fields keep DynamoDB's value.
type WarmThroughput struct {
	ReadUnitsPerSecond, WriteUnitsPerSecond int
}

// Access is one principal's data-plane access in a table's resource-based
// policy: how a role of another account (or that account as a whole)
// reads or writes the table without a role in this one.
type Access struct {
	// Principal is an IAM role ARN (arn:aws:iam::<account>:role/<name>) or
	// a 12-digit account id, whose own IAM policies then decide which of
	// its principals may use the access. Never "*".
	Principal string
	// Actions are item actions, as GrantExactly takes them
	// (dynamodb:GetItem, dynamodb:PutItem, …); no control-plane action
	// (DeleteTable, UpdateTable, …), no Scan, no wildcard.
	Actions []string
	// Indexes the principal may Query, by name from the spec.
	Indexes []string
}

// Policy is what a stage decides for a table.
type Policy struct {
	// Stage the policy is for.
	Stage Stage
	// PointInTimeRecovery keeps continuous backups.
	//
	// Default: false in dev, true in stage and prod.
	PointInTimeRecovery bool
	// RecoveryPeriodDays is the point-in-time recovery window.
	//
	// Default: 35 (the maximum) where recovery is on.
	RecoveryPeriodDays int
	// RemovalPolicy applies when the table leaves the stack.
	//
	// Default: DESTROY in dev, RETAIN in stage and prod.
	RemovalPolicy awscdk.RemovalPolicy
	// DeletionProtection makes DynamoDB refuse DeleteTable.
	//
	// Default: true in prod, false elsewhere.
	DeletionProtection bool
	// Stream enables a stream where the spec does not need one.
	//
	// Default: NoStream; a spec's Stream always wins over this.
	Stream StreamView
	// Billing of the table's throughput.
	//
	// Default: on-demand in every stage (none of the documented workloads
	// has the steady traffic that makes provisioned cheaper), capped at the
	// stage's request units per second.
	Billing Billing
	// Encryption selects the key owner.
	//
	// Default: the spec's Encryption where its document names a key
	// (rez_agent: AWSManaged), else AWSOwned.
	Encryption Encryption
	// EncryptionKey is the customer-managed key; required exactly when
	// Encryption is CustomerManaged.
	//
	// Default: none.
	EncryptionKey awskms.IKey
	// Tags are added to the table besides `service` and `stage`.
	//
	// Default: none.
	Tags map[string]string
	// ContributorInsights records the table's hot keys.
	//
	// Default: ThrottledKeys in prod (it costs nothing until a key is
	// throttled), NoContributorInsights in dev and stage.
	ContributorInsights ContributorInsights
	// WarmThroughput pre-warms the table.
	//
	// Default: none (DynamoDB's own: 12,000 reads and 4,000 writes per
	// second for a new on-demand table).
	WarmThroughput WarmThroughput
	// ResourceAccess is the table's resource-based policy, one Allow
	// statement per entry (and one for its index queries).
	//
	// Default: none (no resource-based policy).
	ResourceAccess []Access
}

// DefaultPolicy is the platform default for a stage. Billing is always
// on-demand: none of the documented workloads has the steady traffic that
// makes provisioned capacity cheaper.
func DefaultPolicy(stage Stage) (Policy, error) {
	if _, err := ParseStage(string(stage)); err != nil {
		return Policy{}, err
	}
	p := Policy{Stage: stage, Encryption: AWSOwned, Billing: Billing{Mode: OnDemand}}
	switch stage {
	case Dev:
		p.RemovalPolicy = awscdk.RemovalPolicy_DESTROY
		p.Billing.MaxReadRequestUnits, p.Billing.MaxWriteRequestUnits = DevMaxReadRequestUnits, DevMaxWriteRequestUnits
	case Stg:
		p.PointInTimeRecovery = true
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
		p.Billing.MaxReadRequestUnits, p.Billing.MaxWriteRequestUnits = StageMaxReadRequestUnits, StageMaxWriteRequestUnits
	case Prod:
		p.PointInTimeRecovery = true
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
		p.DeletionProtection = true
		p.Billing.MaxReadRequestUnits, p.Billing.MaxWriteRequestUnits = ProdMaxReadRequestUnits, ProdMaxWriteRequestUnits
		// The keys DynamoDB throttles are what an operator needs when the
		// on-demand maximums above bite (503s to clients); recording only
		// those costs nothing until a key is throttled.
		p.ContributorInsights = ThrottledKeys
	}
	if p.PointInTimeRecovery {
		p.RecoveryPeriodDays = MaxRecoveryPeriodDays
	}
	return p, nil
}

// Overrides changes the stage policy of one table. A nil field keeps the
// stage default.
type Overrides struct {
	PointInTimeRecovery *bool
	RecoveryPeriodDays  *int
	RemovalPolicy       *awscdk.RemovalPolicy
	DeletionProtection  *bool
	Stream              *StreamView
	Billing             *Billing
	Encryption          *Encryption
	EncryptionKey       awskms.IKey
	// Tags are merged over the policy tags.
	Tags map[string]string
	// ContributorInsights, WarmThroughput and ResourceAccess (when not
	// nil) replace the stage's.
	ContributorInsights *ContributorInsights
	WarmThroughput      *WarmThroughput
	ResourceAccess      []Access
}

// Apply returns the policy with the overrides applied. It does not validate;
// Resolve does.
func (p Policy) Apply(o Overrides) Policy {
	if o.PointInTimeRecovery != nil {
		p.PointInTimeRecovery = *o.PointInTimeRecovery
		if p.PointInTimeRecovery && p.RecoveryPeriodDays == 0 {
			p.RecoveryPeriodDays = MaxRecoveryPeriodDays
		}
		if !p.PointInTimeRecovery {
			p.RecoveryPeriodDays = 0
		}
	}
	if o.RecoveryPeriodDays != nil {
		p.RecoveryPeriodDays = *o.RecoveryPeriodDays
	}
	if o.RemovalPolicy != nil {
		p.RemovalPolicy = *o.RemovalPolicy
	}
	if o.DeletionProtection != nil {
		p.DeletionProtection = *o.DeletionProtection
	}
	if o.Stream != nil {
		p.Stream = *o.Stream
	}
	if o.Billing != nil {
		b := *o.Billing
		// A zero cap keeps the stage's: on-demand is never uncapped.
		if b.Mode == OnDemand && p.Billing.Mode == OnDemand {
			if b.MaxReadRequestUnits == 0 {
				b.MaxReadRequestUnits = p.Billing.MaxReadRequestUnits
			}
			if b.MaxWriteRequestUnits == 0 {
				b.MaxWriteRequestUnits = p.Billing.MaxWriteRequestUnits
			}
		}
		p.Billing = b
	}
	if o.Encryption != nil {
		p.Encryption = *o.Encryption
	}
	if o.EncryptionKey != nil {
		p.EncryptionKey = o.EncryptionKey
	}
	if o.ContributorInsights != nil {
		p.ContributorInsights = *o.ContributorInsights
	}
	if o.WarmThroughput != nil {
		p.WarmThroughput = *o.WarmThroughput
	}
	if o.ResourceAccess != nil {
		p.ResourceAccess = o.ResourceAccess
	}
	if len(o.Tags) > 0 {
		tags := maps.Clone(p.Tags)
		if tags == nil {
			tags = map[string]string{}
		}
		maps.Copy(tags, o.Tags)
		p.Tags = tags
	}
	return p
}

// reservedTags are set by the construct itself.
var reservedTags = []string{"service", "stage"}

// Resolve applies the overrides to the stage default and checks the result
// against the spec. The error names every contradictory value and its fix.
func Resolve(spec Spec, stage Stage, o Overrides) (Policy, error) {
	p, err := DefaultPolicy(stage)
	if err != nil {
		return Policy{}, err
	}
	p = p.Apply(o)
	// The spec's requirements are not defaults: they are the document's word.
	if spec.RequirePointInTimeRecovery && o.PointInTimeRecovery == nil {
		p.PointInTimeRecovery = true
		if p.RecoveryPeriodDays == 0 {
			p.RecoveryPeriodDays = MaxRecoveryPeriodDays
		}
	}
	if spec.Stream != NoStream && o.Stream == nil {
		p.Stream = spec.Stream
	}
	// The document's key is the default; a stage may still choose another.
	if spec.Encryption != "" && o.Encryption == nil {
		p.Encryption = spec.Encryption
	}
	return p, p.check(spec)
}

func (p Policy) check(spec Spec) error {
	var errs errorList
	where := fmt.Sprintf("%s in %s", spec.PhysicalName(p.Stage), p.Stage)
	if spec.RequirePointInTimeRecovery && !p.PointInTimeRecovery {
		errs.addf("%s: PointInTimeRecovery=false, but the %s design requires point-in-time recovery in every stage: remove the override", where, spec.Service)
	}
	if p.PointInTimeRecovery && (p.RecoveryPeriodDays < MinRecoveryPeriodDays || p.RecoveryPeriodDays > MaxRecoveryPeriodDays) {
		errs.addf("%s: RecoveryPeriodDays=%d: the window is %d to %d days", where, p.RecoveryPeriodDays, MinRecoveryPeriodDays, MaxRecoveryPeriodDays)
	}
	if !p.PointInTimeRecovery && p.RecoveryPeriodDays != 0 {
		errs.addf("%s: RecoveryPeriodDays=%d with PointInTimeRecovery=false: enable recovery or drop the period", where, p.RecoveryPeriodDays)
	}
	if spec.Stream != NoStream && p.Stream != spec.Stream {
		errs.addf("%s: Stream=%q, but the %s code consumes a %s stream: remove the Stream override", where, p.Stream, spec.Service, spec.Stream)
	}
	switch p.Stream {
	case NoStream, KeysOnly, NewImage, OldImage, NewAndOldImages:
	default:
		errs.addf("%s: Stream=%q is not a stream view: use one of KEYS_ONLY, NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES", where, p.Stream)
	}
	switch p.RemovalPolicy {
	case awscdk.RemovalPolicy_DESTROY, awscdk.RemovalPolicy_RETAIN, awscdk.RemovalPolicy_SNAPSHOT, awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE:
	default:
		errs.addf("%s: RemovalPolicy=%q is not set: use RETAIN or DESTROY", where, p.RemovalPolicy)
	}
	if p.DeletionProtection && p.RemovalPolicy == awscdk.RemovalPolicy_DESTROY {
		errs.addf("%s: DeletionProtection=true with RemovalPolicy=DESTROY: CloudFormation could never delete the table and the stack deletion would fail; set RemovalPolicy to RETAIN or DeletionProtection to false", where)
	}
	if p.Stage == Prod && p.RemovalPolicy == awscdk.RemovalPolicy_DESTROY {
		errs.addf("%s: RemovalPolicy=DESTROY in prod: removing the table from the stack would delete production data; use RETAIN (the prod default)", where)
	}
	errs = append(errs, p.Billing.problems(where)...)
	switch p.Encryption {
	case AWSOwned, AWSManaged:
		if p.EncryptionKey != nil {
			errs.addf("%s: EncryptionKey is set with Encryption=%s: the key would be ignored; set Encryption to CUSTOMER_MANAGED or drop the key", where, p.Encryption)
		}
	case CustomerManaged:
		if p.EncryptionKey == nil {
			errs.addf("%s: Encryption=CUSTOMER_MANAGED without an EncryptionKey: pass the awskms.IKey in Overrides.EncryptionKey", where)
		}
	default:
		errs.addf("%s: Encryption=%q is not one of AWS_OWNED, AWS_MANAGED, CUSTOMER_MANAGED", where, p.Encryption)
	}
	switch p.ContributorInsights {
	case NoContributorInsights, AccessedAndThrottledKeys, ThrottledKeys:
	default:
		errs.addf("%s: ContributorInsights=%q is not a mode: use THROTTLED_KEYS (records only throttled keys), ACCESSED_AND_THROTTLED_KEYS or none", where, p.ContributorInsights)
	}
	errs = append(errs, p.warmProblems(where)...)
	errs = append(errs, p.accessProblems(spec, where)...)
	for _, k := range reservedTags {
		if _, ok := p.Tags[k]; ok {
			errs.addf("%s: tag %q is set by the construct from the spec and stage: remove it from Tags", where, k)
		}
	}
	return errs.err()
}

// warmProblems refuses warm throughput that buys nothing or that DynamoDB
// refuses: below what a new on-demand table already has, above the table
// quota, or above the table's own on-demand cap (the cap throttles first).
func (p Policy) warmProblems(where string) []string {
	var errs errorList
	w := p.WarmThroughput
	for _, f := range []struct {
		name     string
		v, floor int
		cap      int
		capName  string
	}{
		{"ReadUnitsPerSecond", w.ReadUnitsPerSecond, MinWarmReadUnits, p.Billing.MaxReadRequestUnits, "MaxReadRequestUnits"},
		{"WriteUnitsPerSecond", w.WriteUnitsPerSecond, MinWarmWriteUnits, p.Billing.MaxWriteRequestUnits, "MaxWriteRequestUnits"},
	} {
		switch {
		case f.v == 0:
		case f.v < f.floor:
			errs.addf("%s: WarmThroughput.%s=%d is below the %d every new on-demand table already has: it would buy nothing; use %d to %d, or 0 to keep DynamoDB's", where, f.name, f.v, f.floor, f.floor, MaxOnDemandRequestUnits)
		case f.v > MaxOnDemandRequestUnits:
			errs.addf("%s: WarmThroughput.%s=%d is above DynamoDB's default per-table quota of %d: use at most %d", where, f.name, f.v, MaxOnDemandRequestUnits, MaxOnDemandRequestUnits)
		case p.Billing.Mode == OnDemand && f.cap > 0 && f.v > f.cap:
			errs.addf("%s: WarmThroughput.%s=%d is above Billing.%s=%d: the cap throttles first, so the warm throughput buys nothing; raise the cap in the same override, or lower the warm throughput", where, f.name, f.v, f.capName, f.cap)
		}
	}
	return errs
}

var (
	accountPrincipal = regexp.MustCompile(`^[0-9]{12}$`)
	rolePrincipal    = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}$`)
)

// accessProblems keeps a resource-based policy to the data plane of named
// principals: a wildcard principal would open the table to every AWS
// account, and a control-plane action (DeleteTable, UpdateTable,
// PutResourcePolicy) would let another account change or delete it.
func (p Policy) accessProblems(spec Spec, where string) []string {
	var errs errorList
	for i, a := range p.ResourceAccess {
		at := fmt.Sprintf("%s: ResourceAccess[%d]", where, i)
		if !accountPrincipal.MatchString(a.Principal) && !rolePrincipal.MatchString(a.Principal) {
			errs.addf("%s: Principal %q: name an IAM role ARN (arn:aws:iam::123456789012:role/reader) or a 12-digit account id; never \"*\", a user or a service", at, a.Principal)
		}
		if len(a.Actions) == 0 && len(a.Indexes) == 0 {
			errs.addf("%s: no Actions and no Indexes grant nothing: list the item actions the principal calls", at)
		}
		for _, act := range a.Actions {
			if !itemActions[act] {
				errs.addf("%s: action %q is not a data-plane item action: use dynamodb:GetItem, dynamodb:Query, dynamodb:PutItem, dynamodb:UpdateItem, dynamodb:DeleteItem, dynamodb:BatchGetItem, dynamodb:BatchWriteItem or dynamodb:ConditionCheckItem (no control plane, no Scan, no wildcard)", at, act)
			}
		}
		for _, ix := range a.Indexes {
			if !slices.Contains(spec.IndexNames(), ix) {
				errs.addf("%s: %s has no index %q: use one of %v", at, spec.BaseName, ix, spec.IndexNames())
			}
		}
	}
	return errs
}

func (b Billing) problems(where string) []string {
	var errs errorList
	for name, v := range map[string]int{"MaxReadRequestUnits": b.MaxReadRequestUnits, "MaxWriteRequestUnits": b.MaxWriteRequestUnits, "ReadCapacity": b.ReadCapacity, "WriteCapacity": b.WriteCapacity} {
		if v < 0 {
			errs.addf("%s: Billing.%s=%d is negative: use a positive number, or 0 for unset", where, name, v)
		}
	}
	switch b.Mode {
	case OnDemand:
		if b.ReadCapacity != 0 || b.WriteCapacity != 0 {
			errs.addf("%s: Billing.ReadCapacity/WriteCapacity=%d/%d with on-demand billing: set Mode to PROVISIONED or drop the capacities", where, b.ReadCapacity, b.WriteCapacity)
		}
		for name, v := range map[string]int{"MaxReadRequestUnits": b.MaxReadRequestUnits, "MaxWriteRequestUnits": b.MaxWriteRequestUnits} {
			if v == 0 {
				errs.addf("%s: Billing.%s=0 leaves on-demand throughput uncapped: set a cap of 1 to %d request units per second (table.DefaultPolicy has the stage's)", where, name, MaxOnDemandRequestUnits)
			}
			if v > MaxOnDemandRequestUnits {
				errs.addf("%s: Billing.%s=%d is above DynamoDB's default per-table quota of %d: use at most %d (a raised account quota needs table.MaxOnDemandRequestUnits raised with it)", where, name, v, MaxOnDemandRequestUnits, MaxOnDemandRequestUnits)
			}
		}
	case Provisioned:
		if b.ReadCapacity < 1 || b.WriteCapacity < 1 {
			errs.addf("%s: Billing.Mode=PROVISIONED needs ReadCapacity and WriteCapacity of at least 1 (got %d/%d): set both, or use ON_DEMAND", where, b.ReadCapacity, b.WriteCapacity)
		}
		if b.MaxReadRequestUnits != 0 || b.MaxWriteRequestUnits != 0 {
			errs.addf("%s: Billing.MaxRead/WriteRequestUnits cap on-demand throughput only: drop them with PROVISIONED", where)
		}
	default:
		errs.addf("%s: Billing.Mode=%q is not PAY_PER_REQUEST or PROVISIONED", where, b.Mode)
	}
	sort.Strings(errs)
	return errs
}
