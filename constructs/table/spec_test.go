package table_test

import (
	"fmt"
	"testing"

	"github.com/dynastack/dynastack/constructs/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validSpec() table.Spec {
	return table.Spec{
		Service:      "orders",
		BaseName:     "orders",
		PartitionKey: table.Key{Name: "pk", Type: table.String},
		SortKey:      &table.Key{Name: "sk", Type: table.String},
		Indexes: []table.Index{{
			Name:         "GSI1",
			PartitionKey: table.Key{Name: "gsi1pk", Type: table.String},
			SortKey:      &table.Key{Name: "gsi1sk", Type: table.String},
		}},
		TTLAttribute: "expires_at",
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*table.Spec)
		want   string // substring of the error; "" for valid
	}{
		{"valid", func(*table.Spec) {}, ""},
		{"no base name", func(s *table.Spec) { s.BaseName = "" }, `table base name "" is 0 characters`},
		{"space in name", func(s *table.Spec) { s.BaseName = "my orders" }, `use only a-z, A-Z, 0-9, '_', '-' and '.'`},
		{"bad service", func(s *table.Spec) { s.Service = "Orders" }, `service "Orders": use lower-case letters`},
		{"document's key", func(s *table.Spec) { s.Encryption = table.AWSManaged }, ""},
		{"customer key in a spec", func(s *table.Spec) { s.Encryption = table.CustomerManaged }, `Encryption="CUSTOMER_MANAGED" in a spec: a spec names AWS_OWNED or AWS_MANAGED`},
		{"no partition key name", func(s *table.Spec) { s.PartitionKey.Name = "" }, "table partition key has no name: set Key.Name"},
		{"bad key type", func(s *table.Spec) { s.PartitionKey.Type = "SS" }, `keys are String (S), Number (N) or Binary (B)`},
		{"sort key is partition key", func(s *table.Spec) { s.SortKey.Name = "pk" }, `table sort key "pk" is also the partition key`},
		{"too many indexes", func(s *table.Spec) {
			for i := range table.MaxGlobalSecondaryIndexes {
				s.Indexes = append(s.Indexes, table.Index{Name: fmt.Sprintf("gsi-%02d", i), PartitionKey: table.Key{Name: "gsi1pk", Type: table.String}})
			}
		}, "21 global secondary indexes: a table has at most 20"},
		{"duplicate index", func(s *table.Spec) { s.Indexes = append(s.Indexes, s.Indexes[0]) }, `index "GSI1" is declared twice`},
		{"short index name", func(s *table.Spec) { s.Indexes[0].Name = "ix" }, `index "ix" name "ix" is 2 characters: DynamoDB allows 3 to 255`},
		{"index key type conflict", func(s *table.Spec) { s.Indexes[0].PartitionKey = table.Key{Name: "sk", Type: table.Number} }, `"sk" has type N but is declared elsewhere as S`},
		{"ttl is table key", func(s *table.Spec) { s.TTLAttribute = "sk" }, `TTL attribute "sk" is also a key attribute`},
		{"ttl is index key", func(s *table.Spec) { s.TTLAttribute = "gsi1sk" }, `TTL attribute "gsi1sk" is also a key attribute`},
		{"include without attributes", func(s *table.Spec) { s.Indexes[0].Projection = table.ProjectInclude }, "projection INCLUDE but no NonKeyAttributes"},
		{"attributes without include", func(s *table.Spec) { s.Indexes[0].NonKeyAttributes = []string{"a"} }, "with projection ALL: set Projection to ProjectInclude"},
		{"unknown projection", func(s *table.Spec) { s.Indexes[0].Projection = "SOME" }, `projection "SOME" is not one of ALL, KEYS_ONLY, INCLUDE`},
		{"unknown stream", func(s *table.Spec) { s.Stream = "ALL_IMAGES" }, `stream view "ALL_IMAGES" is not one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			tt.mutate(&s)
			err := s.Validate()
			if tt.want == "" {
				require.NoError(t, err, "Validate()")
				return
			}
			require.ErrorContains(t, err, tt.want, "Validate()")
			assert.ErrorIs(t, err, table.ErrInvalid)
			var ve *table.ValidationError
			if assert.ErrorAs(t, err, &ve) {
				assert.NotEmpty(t, ve.Problems, "ValidationError without problems: %v", err)
			}
		})
	}
}

func TestSpecValidateReportsEveryProblem(t *testing.T) {
	s := validSpec()
	s.BaseName = "x"
	s.TTLAttribute = "pk"
	var ve *table.ValidationError
	require.ErrorAs(t, s.Validate(), &ve)
	require.Len(t, ve.Problems, 2, "want 2 problems reported together")
}

func TestPhysicalName(t *testing.T) {
	assert.Equal(t, "orders-stage", validSpec().PhysicalName(table.Stg), "PhysicalName(stage)")
}
