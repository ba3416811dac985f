// Package cfntables recreates the DynamoDB tables of CDK-synthesized
// CloudFormation templates in another DynamoDB (DynamoDB Local), and exposes
// the templates' Lambda functions with their environment.
//
// The template is the contract between infrastructure and code: when tests
// and the local runner build their tables from it, a key, attribute or index
// renamed on one side and not the other fails a test instead of production.
//
// Supported: AWS::DynamoDB::GlobalTable (what CDK's TableV2 synthesizes) and
// AWS::DynamoDB::Table, with key schema, attribute definitions, global and
// local secondary indexes and their projections, streams and TTL. Billing,
// replicas, encryption, recovery, tags and deletion protection have no local
// meaning and are ignored; tables are always created on-demand.
package cfntables

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Resource types read from templates.
const (
	TypeGlobalTable = "AWS::DynamoDB::GlobalTable"
	TypeTable       = "AWS::DynamoDB::Table"
	TypeFunction    = "AWS::Lambda::Function"
)

// TemplateSuffix is how CDK names templates in a cloud assembly.
const TemplateSuffix = ".template.json"

// ErrUnsupported marks template content this package cannot reproduce
// locally, e.g. a table name computed by an intrinsic function.
var ErrUnsupported = errors.New("cfntables: unsupported template content")

// Template is a parsed CloudFormation template.
type Template struct {
	// Path is the file the template was loaded from.
	Path string
	// Stack is the file name without ".template.json".
	Stack     string
	Resources map[string]Resource
}

// Resource is one resource of a template.
type Resource struct {
	Type       string          `json:"Type"`
	Properties json.RawMessage `json:"Properties"`
}

// Load reads one template file.
func Load(path string) (*Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cfntables: %w", err)
	}
	t, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("cfntables: %s: %w", path, err)
	}
	t.Path = path
	t.Stack = strings.TrimSuffix(filepath.Base(path), TemplateSuffix)
	return t, nil
}

// Parse parses a template from JSON.
func Parse(b []byte) (*Template, error) {
	var doc struct {
		Resources map[string]Resource `json:"Resources"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	return &Template{Resources: doc.Resources}, nil
}

// LoadDir reads every *.template.json of dir, sorted by file name. A
// directory without templates is an error: it almost always means `cdk
// synth` has not run or the wrong directory was given.
func LoadDir(dir string) ([]*Template, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+TemplateSuffix))
	if err != nil {
		return nil, fmt.Errorf("cfntables: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("cfntables: no *%s in %s (run `npx cdk synth` first?)", TemplateSuffix, dir)
	}
	sort.Strings(paths)
	out := make([]*Template, 0, len(paths))
	for _, p := range paths {
		t, err := Load(p)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func (t *Template) logicalIDs(types ...string) []string {
	var ids []string
	for id, r := range t.Resources {
		for _, typ := range types {
			if r.Type == typ {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// Table is a table definition read from a template.
type Table struct {
	LogicalID string
	// Name is the TableName of the template, or "" when CloudFormation
	// would generate one.
	Name string
	// Input creates the table; its TableName is filled in by Create.
	Input dynamodb.CreateTableInput
	// TTL is the time-to-live setting, nil when the template has none.
	TTL *types.TimeToLiveSpecification
}

type keyElement struct {
	AttributeName string `json:"AttributeName"`
	KeyType       string `json:"KeyType"`
}

type projection struct {
	ProjectionType   string   `json:"ProjectionType"`
	NonKeyAttributes []string `json:"NonKeyAttributes"`
}

type index struct {
	IndexName  string       `json:"IndexName"`
	KeySchema  []keyElement `json:"KeySchema"`
	Projection projection   `json:"Projection"`
}

type tableProps struct {
	TableName            json.RawMessage `json:"TableName"`
	AttributeDefinitions []struct {
		AttributeName string `json:"AttributeName"`
		AttributeType string `json:"AttributeType"`
	} `json:"AttributeDefinitions"`
	KeySchema               []keyElement `json:"KeySchema"`
	GlobalSecondaryIndexes  []index      `json:"GlobalSecondaryIndexes"`
	LocalSecondaryIndexes   []index      `json:"LocalSecondaryIndexes"`
	TimeToLiveSpecification *struct {
		AttributeName string `json:"AttributeName"`
		Enabled       bool   `json:"Enabled"`
	} `json:"TimeToLiveSpecification"`
	StreamSpecification *struct {
		StreamViewType string `json:"StreamViewType"`
	} `json:"StreamSpecification"`
}

// Tables returns the table definitions of t, sorted by logical id.
func (t *Template) Tables() ([]Table, error) {
	var out []Table
	for _, id := range t.logicalIDs(TypeGlobalTable, TypeTable) {
		tbl, err := parseTable(id, t.Resources[id].Properties)
		if err != nil {
			return nil, fmt.Errorf("cfntables: table %s: %w", id, err)
		}
		out = append(out, tbl)
	}
	return out, nil
}

func parseTable(id string, raw json.RawMessage) (Table, error) {
	var p tableProps
	if err := json.Unmarshal(raw, &p); err != nil {
		return Table{}, err
	}
	tbl := Table{LogicalID: id}
	if len(p.TableName) > 0 {
		if err := json.Unmarshal(p.TableName, &tbl.Name); err != nil {
			return Table{}, fmt.Errorf("%w: TableName %s is not a literal string", ErrUnsupported, p.TableName)
		}
	}
	if len(p.KeySchema) == 0 {
		return Table{}, errors.New("no KeySchema")
	}
	in := &tbl.Input
	in.BillingMode = types.BillingModePayPerRequest
	in.KeySchema = keySchema(p.KeySchema)
	for _, a := range p.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName),
			AttributeType: types.ScalarAttributeType(a.AttributeType),
		})
	}
	for _, ix := range p.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.IndexName),
			KeySchema:  keySchema(ix.KeySchema),
			Projection: toProjection(ix.Projection),
		})
	}
	for _, ix := range p.LocalSecondaryIndexes {
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
			IndexName:  aws.String(ix.IndexName),
			KeySchema:  keySchema(ix.KeySchema),
			Projection: toProjection(ix.Projection),
		})
	}
	if s := p.StreamSpecification; s != nil && s.StreamViewType != "" {
		in.StreamSpecification = &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewType(s.StreamViewType),
		}
	}
	if ttl := p.TimeToLiveSpecification; ttl != nil && ttl.Enabled {
		tbl.TTL = &types.TimeToLiveSpecification{AttributeName: aws.String(ttl.AttributeName), Enabled: aws.Bool(true)}
	}
	return tbl, nil
}

func keySchema(ks []keyElement) []types.KeySchemaElement {
	out := make([]types.KeySchemaElement, len(ks))
	for i, k := range ks {
		out[i] = types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)}
	}
	return out
}

func toProjection(p projection) *types.Projection {
	typ := types.ProjectionType(p.ProjectionType)
	if typ == "" {
		typ = types.ProjectionTypeAll // CloudFormation's default
	}
	return &types.Projection{ProjectionType: typ, NonKeyAttributes: p.NonKeyAttributes}
}
