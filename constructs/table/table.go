package table

import (
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// IAM actions granted by intent. Scan is left out on purpose: no documented
// access pattern scans a table, and a Scan grant is how a bug becomes a full
// table read. Grant it explicitly with Table.Resource.Grant if you must.
var (
	ReadActions = []string{
		"dynamodb:BatchGetItem",
		"dynamodb:ConditionCheckItem",
		"dynamodb:DescribeTable",
		"dynamodb:GetItem",
		"dynamodb:Query",
	}
	WriteActions = []string{
		"dynamodb:BatchWriteItem",
		"dynamodb:ConditionCheckItem",
		"dynamodb:DeleteItem",
		"dynamodb:DescribeTable",
		"dynamodb:PutItem",
		"dynamodb:UpdateItem",
	}
	StreamReadActions = []string{
		"dynamodb:DescribeStream",
		"dynamodb:GetRecords",
		"dynamodb:GetShardIterator",
	}
	// ListStreamsAction supports no resource-level permission: it is
	// granted on "*", in a statement of its own.
	ListStreamsAction = "dynamodb:ListStreams"
)

// Props configures a table construct.
type Props struct {
	// Stage the table is deployed to. Required.
	Stage Stage
	// Overrides of the stage policy for this table.
	//
	// Default: none, the stage policy applies as is.
	Overrides Overrides
	// TableName replaces the physical name. Changing the name of a deployed
	// table replaces it, losing its data.
	//
	// Default: Spec.PhysicalName(Stage), e.g. "poc-itsm-tickets-dev".
	TableName string
}

// Table is a deployed or referenced table together with its documented
// schema. Grants and environment variables are derived from the schema, so a
// Lambda is never granted an index the document does not name.
type Table struct {
	// Resource is the underlying TableV2, or the reference made by Import.
	Resource awsdynamodb.ITableV2
	// Spec is the documented schema.
	Spec Spec
	// Policy is the resolved stage policy; zero for an imported table.
	Policy Policy

	key       awskms.IKey
	streamArn *string
}

// New creates the table of spec in scope. It returns a *ValidationError naming
// every invalid or contradictory value.
func New(scope constructs.Construct, id string, spec Spec, props Props) (*Table, error) {
	path := *scope.Node().Path() + "/" + id
	if err := spec.Validate(); err != nil {
		return nil, located(err, path)
	}
	policy, err := Resolve(spec, props.Stage, props.Overrides)
	if err != nil {
		return nil, located(err, path)
	}
	if policy.Encryption == CustomerManaged && *awscdk.Token_IsUnresolved(awscdk.Stack_Of(scope).Region()) {
		return nil, located(&ValidationError{Problems: []string{fmt.Sprintf(
			"Encryption=CUSTOMER_MANAGED in an environment-agnostic stack: TableV2 needs the region to place the key; set Region for stage %s in infra/config (or the stack's env)", props.Stage)}}, path)
	}
	name := spec.PhysicalName(props.Stage)
	if props.TableName != "" {
		if err := validateName("table name", props.TableName, MinTableNameLength, MaxTableNameLength); err != nil {
			return nil, located(&ValidationError{Problems: []string{err.Error()}}, path)
		}
		name = props.TableName
	}

	tp := &awsdynamodb.TablePropsV2{
		TableName:     jsii.String(name),
		PartitionKey:  attribute(spec.PartitionKey),
		Billing:       billing(policy.Billing),
		RemovalPolicy: policy.RemovalPolicy,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(policy.PointInTimeRecovery),
		},
		DeletionProtection: jsii.Bool(policy.DeletionProtection),
		Encryption:         encryption(policy),
	}
	if policy.PointInTimeRecovery {
		tp.PointInTimeRecoverySpecification.RecoveryPeriodInDays = jsii.Number(float64(policy.RecoveryPeriodDays))
	}
	if spec.SortKey != nil {
		tp.SortKey = attribute(*spec.SortKey)
	}
	if spec.TTLAttribute != "" {
		tp.TimeToLiveAttribute = jsii.String(spec.TTLAttribute)
	}
	if policy.Stream != NoStream {
		tp.DynamoStream = awsdynamodb.StreamViewType(policy.Stream)
	}
	if policy.ContributorInsights != NoContributorInsights {
		tp.ContributorInsightsSpecification = &awsdynamodb.ContributorInsightsSpecification{
			Enabled: jsii.Bool(true),
			Mode:    awsdynamodb.ContributorInsightsMode(policy.ContributorInsights),
		}
	}
	if w := policy.WarmThroughput; w != (WarmThroughput{}) {
		tp.WarmThroughput = &awsdynamodb.WarmThroughput{}
		if w.ReadUnitsPerSecond > 0 {
			tp.WarmThroughput.ReadUnitsPerSecond = jsii.Number(float64(w.ReadUnitsPerSecond))
		}
		if w.WriteUnitsPerSecond > 0 {
			tp.WarmThroughput.WriteUnitsPerSecond = jsii.Number(float64(w.WriteUnitsPerSecond))
		}
	}
	if len(policy.ResourceAccess) > 0 {
		tp.ResourcePolicy = resourcePolicy(name, policy.ResourceAccess)
	}
	if len(spec.Indexes) > 0 {
		gsis := make([]*awsdynamodb.GlobalSecondaryIndexPropsV2, 0, len(spec.Indexes))
		for _, ix := range spec.Indexes {
			g := &awsdynamodb.GlobalSecondaryIndexPropsV2{
				IndexName:      jsii.String(ix.Name),
				PartitionKey:   attribute(ix.PartitionKey),
				ProjectionType: awsdynamodb.ProjectionType(projectionOrDefault(ix.Projection)),
			}
			if ix.SortKey != nil {
				g.SortKey = attribute(*ix.SortKey)
			}
			if len(ix.NonKeyAttributes) > 0 {
				g.NonKeyAttributes = jsii.Strings(ix.NonKeyAttributes...)
			}
			// An index has its own on-demand throughput: uncapped, a query
			// flood on it would bypass the table's cap.
			if policy.Billing.Mode == OnDemand {
				g.MaxReadRequestUnits = jsii.Number(float64(policy.Billing.MaxReadRequestUnits))
				g.MaxWriteRequestUnits = jsii.Number(float64(policy.Billing.MaxWriteRequestUnits))
			}
			gsis = append(gsis, g)
		}
		tp.GlobalSecondaryIndexes = &gsis
	}

	res := awsdynamodb.NewTableV2(scope, jsii.String(id), tp)
	addChecks(res, spec, policy)
	tags := awscdk.Tags_Of(res)
	tags.Add(jsii.String("service"), jsii.String(spec.Service), nil)
	tags.Add(jsii.String("stage"), jsii.String(string(props.Stage)), nil)
	for _, k := range slices.Sorted(maps.Keys(policy.Tags)) {
		tags.Add(jsii.String(k), jsii.String(policy.Tags[k]), nil)
	}
	t := &Table{Resource: res, Spec: spec, Policy: policy, key: policy.EncryptionKey}
	if policy.Stream != NoStream {
		t.streamArn = res.TableStreamArn()
	}
	return t, nil
}

// ImportOptions describe a deployed table that Import references.
type ImportOptions struct {
	// TableName of the deployed table.
	//
	// Default: Spec.PhysicalName(stage).
	TableName string
	// StreamArn of the table's stream; required for GrantStreamRead.
	//
	// Default: none.
	StreamArn string
	// EncryptionKey is the customer-managed key of the table, so grants also
	// allow its use.
	//
	// Default: none (AWS-owned or AWS-managed key).
	EncryptionKey awskms.IKey
}

// Import references a table deployed by another stack, such as a dynastack
// stage, so that a team's own stack can grant its functions access by intent.
func Import(scope constructs.Construct, id string, spec Spec, stage Stage, opts ImportOptions) (*Table, error) {
	path := *scope.Node().Path() + "/" + id
	if _, err := ParseStage(string(stage)); err != nil {
		return nil, located(&ValidationError{Problems: []string{err.Error()}}, path)
	}
	if err := spec.Validate(); err != nil {
		return nil, located(err, path)
	}
	name := opts.TableName
	if name == "" {
		name = spec.PhysicalName(stage)
	}
	attrs := &awsdynamodb.TableAttributesV2{
		TableName:             jsii.String(name),
		GlobalIndexes:         jsii.Strings(spec.IndexNames()...),
		GrantIndexPermissions: jsii.Bool(len(spec.Indexes) > 0),
		EncryptionKey:         opts.EncryptionKey,
	}
	t := &Table{Spec: spec, key: opts.EncryptionKey}
	if opts.StreamArn != "" {
		attrs.TableStreamArn = jsii.String(opts.StreamArn)
		t.streamArn = attrs.TableStreamArn
	}
	t.Resource = awsdynamodb.TableV2_FromTableAttributes(scope, jsii.String(id), attrs)
	return t, nil
}

// Name is the physical table name (a token until deploy time).
func (t *Table) Name() *string { return t.Resource.TableName() }

// Arn is the table ARN.
func (t *Table) Arn() *string { return t.Resource.TableArn() }

// IndexArns are the ARNs of the documented indexes, one per index: grants name
// each index instead of index/*.
func (t *Table) IndexArns() []*string {
	arns := make([]*string, 0, len(t.Spec.Indexes))
	for _, ix := range t.Spec.Indexes {
		arns = append(arns, jsii.String(fmt.Sprintf("%s/index/%s", *t.Arn(), ix.Name)))
	}
	return arns
}

// GrantRead allows reading items and querying the table and its indexes.
func (t *Table) GrantRead(grantee awsiam.IGrantable) awsiam.Grant {
	if t.key != nil {
		t.key.GrantDecrypt(grantee)
	}
	return t.grant(grantee, ReadActions, append([]*string{t.Arn()}, t.IndexArns()...))
}

// GrantWrite allows creating, updating and deleting items. Index ARNs are not
// needed: DynamoDB maintains indexes on the caller's behalf.
func (t *Table) GrantWrite(grantee awsiam.IGrantable) awsiam.Grant {
	if t.key != nil {
		t.key.GrantEncryptDecrypt(grantee)
	}
	return t.grant(grantee, WriteActions, []*string{t.Arn()})
}

// GrantReadWrite is GrantRead and GrantWrite in one statement.
func (t *Table) GrantReadWrite(grantee awsiam.IGrantable) awsiam.Grant {
	if t.key != nil {
		t.key.GrantEncryptDecrypt(grantee)
	}
	actions := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(ReadActions), WriteActions...))))
	return t.grant(grantee, actions, append([]*string{t.Arn()}, t.IndexArns()...))
}

// GrantStreamRead allows a consumer such as a Lambda event source to read
// the table's stream. It returns an error when the table has no stream.
func (t *Table) GrantStreamRead(grantee awsiam.IGrantable) (awsiam.Grant, error) {
	if t.streamArn == nil {
		return nil, fmt.Errorf("%w: table %s has no stream: enable one with Overrides.Stream, or pass ImportOptions.StreamArn when importing", ErrInvalid, t.Spec.BaseName)
	}
	if t.key != nil {
		t.key.GrantDecrypt(grantee)
	}
	t.grant(grantee, []string{ListStreamsAction}, []*string{jsii.String("*")})
	return t.grant(grantee, StreamReadActions, []*string{t.streamArn}), nil
}

// Environment is what a Lambda needs to find the table: the spec's EnvVar
// mapped to the physical name.
func (t *Table) Environment(envVar string) map[string]*string {
	return map[string]*string{envVar: t.Name()}
}

func (t *Table) grant(grantee awsiam.IGrantable, actions []string, resources []*string) awsiam.Grant {
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      grantee,
		Actions:      jsii.Strings(actions...),
		ResourceArns: &resources,
	})
}

func attribute(k Key) *awsdynamodb.Attribute {
	return &awsdynamodb.Attribute{Name: jsii.String(k.Name), Type: awsdynamodb.AttributeType(attributeTypeName(k.Type))}
}

// attributeTypeName maps the wire type to CDK's enum spelling.
func attributeTypeName(t AttributeType) string {
	switch t {
	case Number:
		return "NUMBER"
	case Binary:
		return "BINARY"
	default:
		return "STRING"
	}
}

// writeTargetUtilization keeps autoscaled writes at 70% of capacity, AWS's
// recommended headroom for bursts while scaling catches up.
const writeTargetUtilization = 70

func billing(b Billing) awsdynamodb.Billing {
	if b.Mode == Provisioned {
		return awsdynamodb.Billing_Provisioned(&awsdynamodb.ThroughputProps{
			ReadCapacity: awsdynamodb.Capacity_Fixed(jsii.Number(float64(b.ReadCapacity))),
			WriteCapacity: awsdynamodb.Capacity_Autoscaled(&awsdynamodb.AutoscaledCapacityOptions{
				MinCapacity:              jsii.Number(1),
				MaxCapacity:              jsii.Number(float64(b.WriteCapacity)),
				TargetUtilizationPercent: jsii.Number(writeTargetUtilization),
			}),
		})
	}
	var caps *awsdynamodb.MaxThroughputProps
	if b.MaxReadRequestUnits > 0 || b.MaxWriteRequestUnits > 0 {
		caps = &awsdynamodb.MaxThroughputProps{}
		if b.MaxReadRequestUnits > 0 {
			caps.MaxReadRequestUnits = jsii.Number(float64(b.MaxReadRequestUnits))
		}
		if b.MaxWriteRequestUnits > 0 {
			caps.MaxWriteRequestUnits = jsii.Number(float64(b.MaxWriteRequestUnits))
		}
	}
	return awsdynamodb.Billing_OnDemand(caps)
}

func encryption(p Policy) awsdynamodb.TableEncryptionV2 {
	switch p.Encryption {
	case AWSManaged:
		return awsdynamodb.TableEncryptionV2_AwsManagedKey()
	case CustomerManaged:
		return awsdynamodb.TableEncryptionV2_CustomerManagedKey(p.EncryptionKey, nil)
	default:
		return awsdynamodb.TableEncryptionV2_DynamoOwnedKey()
	}
}

// resourcePolicy is the table's resource-based policy: one Allow statement
// per principal for its item actions on the table, one for its queries on
// the named indexes. The ARNs are built from the table's name and the
// stack's pseudo parameters: a reference to the table itself would be
// circular.
func resourcePolicy(name string, access []Access) awsiam.PolicyDocument {
	arn := "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/" + name
	principal := func(p string) awsiam.IPrincipal {
		if accountPrincipal.MatchString(p) {
			return awsiam.NewAccountPrincipal(jsii.String(p))
		}
		return awsiam.NewArnPrincipal(jsii.String(p))
	}
	doc := awsiam.NewPolicyDocument(nil)
	for _, a := range access {
		if len(a.Actions) > 0 {
			doc.AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Principals: &[]awsiam.IPrincipal{principal(a.Principal)},
				Actions:    jsii.Strings(slices.Sorted(slices.Values(a.Actions))...),
				Resources:  &[]*string{awscdk.Fn_Sub(jsii.String(arn), nil)},
			}))
		}
		if len(a.Indexes) > 0 {
			var arns []*string
			for _, ix := range a.Indexes {
				arns = append(arns, awscdk.Fn_Sub(jsii.String(arn+"/index/"+ix), nil))
			}
			doc.AddStatements(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Principals: &[]awsiam.IPrincipal{principal(a.Principal)},
				Actions:    jsii.Strings("dynamodb:Query"),
				Resources:  &arns,
			}))
		}
	}
	return doc
}

func located(err error, path string) error {
	if ve, ok := err.(*ValidationError); ok {
		cp := *ve
		cp.Construct = path
		return &cp
	}
	return fmt.Errorf("%s: %w", path, err)
}

// itemActions are the actions GrantExactly takes: each a call a function
// makes on items. Query is granted per index through the indexes argument.
var itemActions = map[string]bool{
	"dynamodb:BatchGetItem": true, "dynamodb:BatchWriteItem": true, "dynamodb:ConditionCheckItem": true,
	"dynamodb:DeleteItem": true, "dynamodb:GetItem": true, "dynamodb:PutItem": true,
	"dynamodb:Query": true, "dynamodb:UpdateItem": true,
}

// GrantExactly allows the item actions listed on the table and
// dynamodb:Query on each named index: least privilege for a function whose
// calls are known, where GrantRead/GrantWrite grant a whole intent. An
// unknown action or index is an error naming it and the choices.
func (t *Table) GrantExactly(grantee awsiam.IGrantable, actions []string, indexes ...string) (awsiam.Grant, error) {
	for _, a := range actions {
		if !itemActions[a] {
			return nil, fmt.Errorf("%w: table %s: action %q: use item actions such as dynamodb:GetItem, dynamodb:UpdateItem (Scan is never granted by intent)", ErrInvalid, t.Spec.BaseName, a)
		}
	}
	if len(actions) == 0 && len(indexes) == 0 {
		return nil, fmt.Errorf("%w: table %s: GrantExactly with no action and no index grants nothing: list what the function calls", ErrInvalid, t.Spec.BaseName)
	}
	var grant awsiam.Grant
	if len(actions) > 0 {
		if t.key != nil {
			t.key.GrantEncryptDecrypt(grantee)
		}
		grant = t.grant(grantee, slices.Sorted(slices.Values(actions)), []*string{t.Arn()})
	}
	var arns []*string
	for _, name := range indexes {
		found := false
		for _, ix := range t.Spec.Indexes {
			found = found || ix.Name == name
		}
		if !found {
			return nil, fmt.Errorf("%w: table %s has no index %q: use one of %v", ErrInvalid, t.Spec.BaseName, name, t.Spec.IndexNames())
		}
		arns = append(arns, jsii.String(fmt.Sprintf("%s/index/%s", *t.Arn(), name)))
	}
	if len(arns) > 0 {
		if t.key != nil && len(actions) == 0 {
			t.key.GrantDecrypt(grantee)
		}
		grant = t.grant(grantee, []string{"dynamodb:Query"}, arns)
	}
	return grant, nil
}
