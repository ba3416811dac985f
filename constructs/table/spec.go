package table

import (
	"fmt"
	"regexp"
	"strings"
)

// AttributeType is the DynamoDB type of a key attribute. Only scalar types can
// be keys.
type AttributeType string

// Key attribute types.
const (
	String AttributeType = "S"
	Number AttributeType = "N"
	Binary AttributeType = "B"
)

// Projection says which attributes an index copies from the table.
type Projection string

// Index projections.
const (
	ProjectAll      Projection = "ALL"
	ProjectKeysOnly Projection = "KEYS_ONLY"
	ProjectInclude  Projection = "INCLUDE"
)

// StreamView is the content of a DynamoDB stream record. The zero value means
// "no stream".
type StreamView string

// Stream views.
const (
	NoStream        StreamView = ""
	KeysOnly        StreamView = "KEYS_ONLY"
	NewImage        StreamView = "NEW_IMAGE"
	OldImage        StreamView = "OLD_IMAGE"
	NewAndOldImages StreamView = "NEW_AND_OLD_IMAGES"
)

// Key is a key attribute: its name and type.
type Key struct {
	Name string
	Type AttributeType
}

// Index is a global secondary index.
type Index struct {
	// Name is the index name that queries use.
	Name string
	// PartitionKey of the index. Required.
	PartitionKey Key
	// SortKey of the index.
	//
	// Default: none.
	SortKey *Key
	// Projection of the index.
	//
	// Default: ProjectAll.
	Projection Projection
	// NonKeyAttributes lists the projected attributes when Projection is
	// ProjectInclude; it must be empty otherwise.
	//
	// Default: none.
	NonKeyAttributes []string
}

// Spec is the schema of one table as its design document gives it. It is the
// same in every stage.
type Spec struct {
	// Service owns the table; it becomes the `service` tag. Required.
	Service string
	// BaseName is the documented table name. The physical name is
	// BaseName + "-" + stage. Required.
	BaseName string
	// PartitionKey of the table. Required.
	PartitionKey Key
	// SortKey of the table.
	//
	// Default: none.
	SortKey *Key
	// Indexes are the global secondary indexes, in document order.
	//
	// Default: none.
	Indexes []Index
	// TTLAttribute names the Number attribute DynamoDB expires items by.
	//
	// Default: TTL disabled.
	TTLAttribute string
	// Stream is the stream view the table's own code depends on (for example
	// a stream consumer that keeps counters). Stage policy cannot turn it off.
	//
	// Default: NoStream; a stage may still enable one.
	Stream StreamView
	// Encryption is the key the design document names for the table. Unlike
	// Stream it is a default, not a requirement: a stage's override wins.
	//
	// Default: "", the stage policy decides (AWSOwned).
	Encryption Encryption
	// RequirePointInTimeRecovery is set when the document requires recovery in
	// every stage; stage policy cannot turn it off.
	//
	// Default: false, the stage policy decides.
	RequirePointInTimeRecovery bool
}

var (
	tableNamePattern   = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)
	serviceNamePattern = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// PhysicalName is the deployed table name in a stage.
func (s Spec) PhysicalName(stage Stage) string {
	return s.BaseName + "-" + string(stage)
}

// IndexNames lists the index names in document order.
func (s Spec) IndexNames() []string {
	names := make([]string, len(s.Indexes))
	for i, ix := range s.Indexes {
		names[i] = ix.Name
	}
	return names
}

// Index returns the named index.
func (s Spec) Index(name string) (Index, bool) {
	for _, ix := range s.Indexes {
		if ix.Name == name {
			return ix, true
		}
	}
	return Index{}, false
}

// Validate reports every problem of the spec at once, so a reviewer fixes them
// in one pass.
func (s Spec) Validate() error {
	var errs errorList
	if !serviceNamePattern.MatchString(s.Service) {
		errs.addf("service %q: use lower-case letters, digits and '-' starting with a letter, e.g. \"itsm\"", s.Service)
	}
	errs.add(validateName("table base name", s.BaseName, MinTableNameLength, MaxTableNameLength))
	errs.add(validateKey("table partition key", s.PartitionKey))
	keyTypes := map[string]AttributeType{}
	record := func(where string, k Key) {
		if prev, ok := keyTypes[k.Name]; ok && prev != k.Type {
			errs.addf("%s %q has type %s but is declared elsewhere as %s: an attribute has one type per table; use one type for it everywhere", where, k.Name, k.Type, prev)
			return
		}
		keyTypes[k.Name] = k.Type
	}
	record("table partition key", s.PartitionKey)
	if s.SortKey != nil {
		errs.add(validateKey("table sort key", *s.SortKey))
		if s.SortKey.Name == s.PartitionKey.Name {
			errs.addf("table sort key %q is also the partition key: use a different attribute for the sort key or drop it", s.SortKey.Name)
		}
		record("table sort key", *s.SortKey)
	}
	if n := len(s.Indexes); n > MaxGlobalSecondaryIndexes {
		errs.addf("%d global secondary indexes: a table has at most %d; merge indexes with overloaded keys (GSI1PK/GSI1SK) or move a pattern to another table", n, MaxGlobalSecondaryIndexes)
	}
	seen := map[string]bool{}
	nonKey := 0
	for _, ix := range s.Indexes {
		where := fmt.Sprintf("index %q", ix.Name)
		errs.add(validateName(where+" name", ix.Name, MinIndexNameLength, MaxIndexNameLength))
		if seen[ix.Name] {
			errs.addf("%s is declared twice: index names are unique per table; rename one", where)
		}
		seen[ix.Name] = true
		errs.add(validateKey(where+" partition key", ix.PartitionKey))
		record(where+" partition key", ix.PartitionKey)
		if ix.SortKey != nil {
			errs.add(validateKey(where+" sort key", *ix.SortKey))
			record(where+" sort key", *ix.SortKey)
			if ix.SortKey.Name == ix.PartitionKey.Name {
				errs.addf("%s sort key %q is also its partition key: use a different attribute for the sort key", where, ix.SortKey.Name)
			}
		}
		switch ix.Projection {
		case "", ProjectAll, ProjectKeysOnly:
			if len(ix.NonKeyAttributes) > 0 {
				errs.addf("%s lists non-key attributes %v with projection %s: set Projection to ProjectInclude or drop NonKeyAttributes", where, ix.NonKeyAttributes, projectionOrDefault(ix.Projection))
			}
		case ProjectInclude:
			if len(ix.NonKeyAttributes) == 0 {
				errs.addf("%s has projection INCLUDE but no NonKeyAttributes: list the attributes to project or use ProjectKeysOnly", where)
			}
			nonKey += len(ix.NonKeyAttributes)
		default:
			errs.addf("%s projection %q is not one of ALL, KEYS_ONLY, INCLUDE: use one of the Project* constants", where, ix.Projection)
		}
	}
	if nonKey > MaxNonKeyAttributes {
		errs.addf("%d projected non-key attributes across indexes: the limit is %d; project ALL or fewer attributes", nonKey, MaxNonKeyAttributes)
	}
	switch s.Encryption {
	case "", AWSOwned, AWSManaged:
	default:
		errs.addf("Encryption=%q in a spec: a spec names AWS_OWNED or AWS_MANAGED; a customer-managed key is a stage's choice (Overrides.Encryption with EncryptionKey)", s.Encryption)
	}
	if s.TTLAttribute != "" {
		if t, isKey := keyTypes[s.TTLAttribute]; isKey {
			errs.addf("TTL attribute %q is also a key attribute (type %s): DynamoDB expires items by a Number attribute that no key uses; choose another attribute, e.g. \"expires_at\"", s.TTLAttribute, t)
		}
		if len(s.TTLAttribute) > MaxKeyAttributeNameLength {
			errs.addf("TTL attribute name is %d characters: the limit is %d", len(s.TTLAttribute), MaxKeyAttributeNameLength)
		}
	}
	switch s.Stream {
	case NoStream, KeysOnly, NewImage, OldImage, NewAndOldImages:
	default:
		errs.addf("stream view %q is not one of KEYS_ONLY, NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES: use one of the stream constants", s.Stream)
	}
	return errs.err()
}

func projectionOrDefault(p Projection) Projection {
	if p == "" {
		return ProjectAll
	}
	return p
}

func validateName(what, name string, min, max int) error {
	switch {
	case len(name) < min || len(name) > max:
		return fmt.Errorf("%s %q is %d characters: DynamoDB allows %d to %d", what, name, len(name), min, max)
	case !tableNamePattern.MatchString(name):
		return fmt.Errorf("%s %q has characters DynamoDB rejects: use only a-z, A-Z, 0-9, '_', '-' and '.'", what, name)
	}
	return nil
}

func validateKey(what string, k Key) error {
	switch {
	case k.Name == "":
		return fmt.Errorf("%s has no name: set Key.Name", what)
	case len(k.Name) > MaxKeyAttributeNameLength:
		return fmt.Errorf("%s %q is %d characters: key attribute names are at most %d", what, k.Name, len(k.Name), MaxKeyAttributeNameLength)
	}
	switch k.Type {
	case String, Number, Binary:
		return nil
	default:
		return fmt.Errorf("%s %q has type %q: keys are String (S), Number (N) or Binary (B)", what, k.Name, k.Type)
	}
}

// errorList gathers validation problems into one error.
type errorList []string

func (l *errorList) add(err error) {
	if err != nil {
		*l = append(*l, err.Error())
	}
}

func (l *errorList) addf(format string, args ...any) {
	*l = append(*l, fmt.Sprintf(format, args...))
}

func (l errorList) err() error {
	if len(l) == 0 {
		return nil
	}
	return &ValidationError{Problems: append([]string(nil), l...)}
}

// ValidationError lists every problem found in a spec or policy. Test for it
// with errors.As, or for any validation failure with errors.Is(err,
// ErrInvalid).
type ValidationError struct {
	// Construct is the path of the construct being validated, when known.
	Construct string
	Problems  []string
}

func (e *ValidationError) Error() string {
	prefix := "invalid table"
	if e.Construct != "" {
		prefix += " " + e.Construct
	}
	if len(e.Problems) == 1 {
		return prefix + ": " + e.Problems[0]
	}
	return prefix + ":\n  - " + strings.Join(e.Problems, "\n  - ")
}

// Is makes errors.Is(err, ErrInvalid) true for every ValidationError.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }
