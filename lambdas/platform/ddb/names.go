package ddb

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MarshalItem marshals v, a struct, as attributevalue.MarshalMap does,
// then spells each of names as given where v spells it in upper case.
//
// It is how an item struct carries attributes whose names a contract
// declares (constructs/<service>/contract: Nucleus's pk and gsi1pk): a
// struct tag cannot take a constant, so the struct leaves such a field
// without a name in its tag and names the field as the attribute in upper
// case (PK, GSI1PK), and the store marshals it with the contract's names. Reading
// needs nothing: attributevalue matches an attribute to an untagged field
// whatever its case.
func MarshalItem(v any, names ...string) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		upper := strings.ToUpper(name)
		if av, ok := item[upper]; ok && upper != name {
			delete(item, upper)
			item[name] = av
		}
	}
	return item, nil
}
