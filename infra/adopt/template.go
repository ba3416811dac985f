package adopt

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dynastack/dynastack/infra/ddbguard"
)

const typeGlobalTable = "AWS::DynamoDB::GlobalTable"

// Target is a table of a synthesized stack: what `cdk import` would put in
// place of the live table.
type Target struct {
	Stage, Stack string
	// LogicalID is the table's id in the template, the key of the
	// resource-mapping file; ConstructID is its id in the stack
	// (config.TableKey's second half).
	LogicalID, ConstructID string
	DeletionPolicy         string
	Name                   string
	Keys                   string
	GSIs                   map[string]Index
	LSIs                   map[string]Index
	TTLAttribute           string
	TTLEnabled             bool
	// Stream is the view type, "" without a stream.
	Stream      string
	BillingMode string
	// MaxRead and MaxWrite are the on-demand maximums (0: none);
	// ReadCapacity and WriteMin/WriteMax the provisioned capacity.
	MaxRead, MaxWrite           int64
	ReadCapacity                int64
	WriteMin, WriteMax          int64
	Encryption                  string // AWS_OWNED, AWS_MANAGED, CUSTOMER_MANAGED
	KMSKey                      string // a literal key ARN, "" when a token
	PITR                        bool
	RecoveryPeriodDays          int
	DeletionProtection          bool
	TableClass                  string
	Tags                        map[string]string
	ContributorInsightsInTarget bool
	ResourcePolicyInTarget      bool
	// WarmRead and WarmWrite are the warm throughput the template sets
	// (0: none).
	WarmRead, WarmWrite int64
}

// Index is a GSI or LSI reduced to what adoption compares.
type Index struct {
	Name, Keys, Projection string
	MaxRead, MaxWrite      int64
}

// The table's encryption, in table.Encryption's words.
const (
	awsOwned        = "AWS_OWNED"
	awsManaged      = "AWS_MANAGED"
	customerManaged = "CUSTOMER_MANAGED"
)

// Targets returns the tables of one stack of a golden-file directory or
// cloud assembly.
func Targets(set ddbguard.Set, stage, stack string) ([]Target, error) {
	var out []Target
	for _, tpl := range set.Templates {
		if tpl.Stage != stage || tpl.Stack != stack {
			continue
		}
		for _, id := range slices.Sorted(maps.Keys(tpl.Resources)) {
			res := tpl.Resources[id]
			if res.Type != typeGlobalTable {
				continue
			}
			t, err := parseTarget(id, res)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", tpl.Path, id, err)
			}
			t.Stage, t.Stack = stage, stack
			out = append(out, t)
		}
	}
	return out, nil
}

func parseTarget(id string, res ddbguard.Resource) (Target, error) {
	var p struct {
		TableName                                     string
		AttributeDefinitions                          []AttributeDefinition
		KeySchema                                     []KeyElement
		BillingMode                                   string
		GlobalSecondaryIndexes, LocalSecondaryIndexes []struct {
			IndexName  string
			KeySchema  []KeyElement
			Projection struct {
				ProjectionType   string
				NonKeyAttributes []string
			}
			WriteOnDemandThroughputSettings *struct{ MaxWriteRequestUnits int64 }
		}
		StreamSpecification     *struct{ StreamViewType string }
		TimeToLiveSpecification *struct {
			AttributeName string
			Enabled       bool
		}
		SSESpecification *struct {
			SSEEnabled bool
			SSEType    string
		}
		WriteOnDemandThroughputSettings    *struct{ MaxWriteRequestUnits int64 }
		WarmThroughput                     *struct{ ReadUnitsPerSecond, WriteUnitsPerSecond int64 }
		WriteProvisionedThroughputSettings *struct {
			WriteCapacityAutoScalingSettings *struct{ MinCapacity, MaxCapacity int64 }
		}
		Replicas []struct {
			Region                           any
			DeletionProtectionEnabled        bool
			TableClass                       string
			PointInTimeRecoverySpecification *struct {
				PointInTimeRecoveryEnabled bool
				RecoveryPeriodInDays       int
			}
			ReadOnDemandThroughputSettings    *struct{ MaxReadRequestUnits int64 }
			ReadProvisionedThroughputSettings *struct{ ReadCapacityUnits int64 }
			SSESpecification                  *struct{ KMSMasterKeyId any }
			ContributorInsightsSpecification  any
			ResourcePolicy                    any
			GlobalSecondaryIndexes            []struct {
				IndexName                      string
				ReadOnDemandThroughputSettings *struct{ MaxReadRequestUnits int64 }
			}
			Tags []Tag
		}
	}
	b, err := json.Marshal(res.Properties)
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		return Target{}, fmt.Errorf("not a GlobalTable dynastack synthesizes (%v)", err)
	}
	if len(p.Replicas) != 1 {
		return Target{}, fmt.Errorf("%d replicas: adoption compares a single-Region table (one replica)", len(p.Replicas))
	}
	r := p.Replicas[0]
	types := map[string]string{}
	for _, d := range p.AttributeDefinitions {
		types[d.AttributeName] = d.AttributeType
	}
	t := Target{
		LogicalID:      id,
		ConstructID:    constructID(res.CDKPath),
		DeletionPolicy: res.DeletionPolicy,
		Name:           p.TableName,
		Keys:           renderKeys(p.KeySchema, types),
		GSIs:           map[string]Index{},
		LSIs:           map[string]Index{},
		BillingMode:    p.BillingMode,
		Encryption:     awsOwned,
		TableClass:     "STANDARD",
		Tags:           map[string]string{},

		DeletionProtection:          r.DeletionProtectionEnabled,
		ContributorInsightsInTarget: r.ContributorInsightsSpecification != nil,
		ResourcePolicyInTarget:      r.ResourcePolicy != nil,
	}
	if t.BillingMode == "" {
		t.BillingMode = "PROVISIONED"
	}
	if r.TableClass != "" {
		t.TableClass = r.TableClass
	}
	readCaps := map[string]int64{}
	for _, g := range r.GlobalSecondaryIndexes {
		if g.ReadOnDemandThroughputSettings != nil {
			readCaps[g.IndexName] = g.ReadOnDemandThroughputSettings.MaxReadRequestUnits
		}
	}
	for _, g := range p.GlobalSecondaryIndexes {
		ix := Index{Name: g.IndexName, Keys: renderKeys(g.KeySchema, types), Projection: projection(g.Projection.ProjectionType, g.Projection.NonKeyAttributes), MaxRead: readCaps[g.IndexName]}
		if g.WriteOnDemandThroughputSettings != nil {
			ix.MaxWrite = g.WriteOnDemandThroughputSettings.MaxWriteRequestUnits
		}
		t.GSIs[g.IndexName] = ix
	}
	for _, l := range p.LocalSecondaryIndexes {
		t.LSIs[l.IndexName] = Index{Name: l.IndexName, Keys: renderKeys(l.KeySchema, types), Projection: projection(l.Projection.ProjectionType, l.Projection.NonKeyAttributes)}
	}
	if s := p.TimeToLiveSpecification; s != nil {
		t.TTLAttribute, t.TTLEnabled = s.AttributeName, s.Enabled
	}
	if s := p.StreamSpecification; s != nil {
		t.Stream = s.StreamViewType
	}
	if s := p.WriteOnDemandThroughputSettings; s != nil {
		t.MaxWrite = s.MaxWriteRequestUnits
	}
	if s := p.WarmThroughput; s != nil {
		t.WarmRead, t.WarmWrite = s.ReadUnitsPerSecond, s.WriteUnitsPerSecond
	}
	if s := r.ReadOnDemandThroughputSettings; s != nil {
		t.MaxRead = s.MaxReadRequestUnits
	}
	if s := r.ReadProvisionedThroughputSettings; s != nil {
		t.ReadCapacity = s.ReadCapacityUnits
	}
	if s := p.WriteProvisionedThroughputSettings; s != nil && s.WriteCapacityAutoScalingSettings != nil {
		t.WriteMin, t.WriteMax = s.WriteCapacityAutoScalingSettings.MinCapacity, s.WriteCapacityAutoScalingSettings.MaxCapacity
	}
	if s := p.SSESpecification; s != nil && s.SSEEnabled {
		t.Encryption = awsManaged
		if r.SSESpecification != nil && r.SSESpecification.KMSMasterKeyId != nil {
			t.Encryption = customerManaged
			t.KMSKey, _ = r.SSESpecification.KMSMasterKeyId.(string)
		}
	}
	if s := r.PointInTimeRecoverySpecification; s != nil {
		t.PITR, t.RecoveryPeriodDays = s.PointInTimeRecoveryEnabled, s.RecoveryPeriodInDays
		if t.PITR && t.RecoveryPeriodDays == 0 {
			t.RecoveryPeriodDays = 35 // DynamoDB's default window
		}
	}
	for _, tag := range r.Tags {
		t.Tags[tag.Key] = tag.Value
	}
	return t, nil
}

// constructID is the table's construct id from its aws:cdk:path
// ("prod/itsm/Tickets/Resource" → "Tickets").
func constructID(cdkPath string) string {
	parts := strings.Split(cdkPath, "/")
	if len(parts) >= 4 {
		return parts[2]
	}
	return ""
}

// renderKeys renders a key schema as "HASH pk (S), RANGE sk (S)".
func renderKeys(keys []KeyElement, types map[string]string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		t := types[k.AttributeName]
		if t == "" {
			t = "?"
		}
		parts[i] = fmt.Sprintf("%s %s (%s)", k.KeyType, k.AttributeName, t)
	}
	return strings.Join(parts, ", ")
}

// projection renders a projection; the order of non-key attributes means
// nothing to DynamoDB.
func projection(typ string, nonKey []string) string {
	if typ == "" {
		typ = "ALL"
	}
	if len(nonKey) == 0 {
		return typ
	}
	return typ + " [" + strings.Join(slices.Sorted(slices.Values(nonKey)), ", ") + "]"
}
