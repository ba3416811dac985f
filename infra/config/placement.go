package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Placement is where one service's stack of a stage deploys: its AWS
// account and Region. An empty field takes the stage's (Stage.Account,
// Stage.Region); both empty leave the stack as environment-agnostic as the
// stage.
type Placement struct {
	Account, Region string
}

// DefaultPartition is the AWS partition of a stage that names none.
const DefaultPartition = "aws"

// ITSMDocumentRegion is the Region ITSM's design document (003) runs its
// proof of concept in (docs/schemas/itsm.md, decision 10). It is not a
// default: a team that wants prod ITSM there sets it,
//
//	Services: map[string]config.Placement{itsmcontract.Name: {Region: config.ITSMDocumentRegion}}
//
// because pinning a Region makes the stack environment-specific, and moving
// a live stack to another Region replaces every resource in it
// (docs/deploying.md, "Moving a service").
const ITSMDocumentRegion = "us-east-1"

// partitionRegions is each partition's Region names: the commercial
// partition's geographic prefixes, China's and GovCloud's. A Region of
// another partition is refused (its ARNs, service principals and
// bootstrap differ, and one stage spans one partition).
var partitionRegions = map[string]*regexp.Regexp{
	"aws":        regexp.MustCompile(`^(us|eu|ap|sa|ca|me|af|il|mx)-(north|south|east|west|central|northeast|northwest|southeast|southwest)-[1-9]$`),
	"aws-cn":     regexp.MustCompile(`^cn-(north|northwest)-[1-9]$`),
	"aws-us-gov": regexp.MustCompile(`^us-gov-(east|west)-1$`),
}

// PartitionOf is the stage's partition: Partition, or DefaultPartition.
func (s Stage) PartitionOf() string {
	if s.Partition == "" {
		return DefaultPartition
	}
	return s.Partition
}

// RegionInPartition reports whether region is a Region name of partition.
func RegionInPartition(region, partition string) bool {
	re, ok := partitionRegions[partition]
	return ok && re.MatchString(region)
}

// PlacementOf is where the stack of service deploys in this stage: the
// service's entry in Services over the stage's Account and Region.
func (s Stage) PlacementOf(service string) Placement {
	p := s.Services[service]
	if p.Account == "" {
		p.Account = s.Account
	}
	if p.Region == "" {
		p.Region = s.Region
	}
	return p
}

// Placed reports whether the service's stack has an environment of its own
// (an entry in Services): only then does its stack carry one, so a stage
// without entries synthesizes exactly as before.
func (s Stage) Placed(service string) bool {
	p, ok := s.Services[service]
	return ok && p != Placement{}
}

// validatePlacements checks the stage's partition and every Services entry:
// a service of the catalog, a 12-digit account, a Region of the stage's
// partition.
func (s Stage) validatePlacements() []error {
	var errs []error
	partition := s.PartitionOf()
	if _, ok := partitionRegions[partition]; !ok {
		errs = append(errs, fmt.Errorf("stage %s: Partition %q: use one of %s", s.Name, partition, strings.Join(slices.Sorted(maps.Keys(partitionRegions)), ", ")))
	}
	services := serviceNames()
	for _, k := range slices.Sorted(maps.Keys(s.Services)) {
		p := s.Services[k]
		if !slices.Contains(services, k) {
			errs = append(errs, fmt.Errorf("stage %s: Services key %q: use a service's name, one of %s", s.Name, k, strings.Join(services, ", ")))
			continue
		}
		if p == (Placement{}) {
			errs = append(errs, fmt.Errorf("stage %s: Services[%q] sets neither Account nor Region: remove the entry, or set where %s deploys", s.Name, k, k))
		}
		if p.Account != "" && !accountID.MatchString(p.Account) {
			errs = append(errs, fmt.Errorf("stage %s: Services[%q].Account %q is not a 12-digit AWS account id", s.Name, k, p.Account))
		}
		if p.Region != "" && !RegionInPartition(p.Region, partition) {
			errs = append(errs, fmt.Errorf("stage %s: Services[%q].Region %q is not a Region of partition %s", s.Name, k, p.Region, partition))
		}
	}
	return errs
}
