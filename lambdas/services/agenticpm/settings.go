package agenticpm

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// Checkpoint is an integration's sync position for a project (PK
// PROJECT#<id>, SK CHECKPOINT#<integration>#<key>).
type Checkpoint struct {
	ProjectID       string `dynamodbav:"projectId" json:"projectId"`
	Integration     string `dynamodbav:"integration" json:"integration"`
	CheckpointKey   string `dynamodbav:"checkpointKey" json:"checkpointKey"`
	CheckpointValue string `dynamodbav:"checkpointValue" json:"checkpointValue"`
	UpdatedAt       string `dynamodbav:"updatedAt" json:"updatedAt"`
}

type checkpointItem struct {
	keys
	Checkpoint
}

// PutCheckpoint stores (creates or replaces) a checkpoint of an existing
// project.
func (s *Store) PutCheckpoint(ctx context.Context, projectID, integration, k, value string) (*Checkpoint, error) {
	c := Checkpoint{ProjectID: projectID, Integration: integration, CheckpointKey: k, CheckpointValue: value,
		UpdatedAt: Timestamp(s.now())}
	item, err := marshalItem(checkpointItem{keys: keys{PK: contract.ProjectPK(projectID), SK: contract.CheckpointSK(integration, k)}, Checkpoint: c})
	if err != nil {
		return nil, err
	}
	if err := s.transactInProject(ctx, projectID, ddb.Tx{s.putAny(item)}); err != nil {
		return nil, err
	}
	return &c, nil
}

// GetCheckpoint returns a checkpoint.
func (s *Store) GetCheckpoint(ctx context.Context, projectID, integration, k string) (*Checkpoint, error) {
	var it checkpointItem
	found, err := s.get(ctx, contract.ProjectPK(projectID), contract.CheckpointSK(integration, k), &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, s.missingUnder(ctx, projectID, "checkpoint", integration+"/"+k)
	}
	return &it.Checkpoint, nil
}

// IntegrationConfig holds an integration's credentials (PK
// INTEGRATION#<name>, SK CONFIG). ConfigEncrypted is the KMS ciphertext
// (base64) of the plaintext config PUT sent, encrypted by the service with
// the stage's credentials key under EncryptionContext (decision 10); an
// agent decrypts it with kms:Decrypt and that context. The plaintext is
// never stored, returned or logged.
type IntegrationConfig struct {
	ID              string            `dynamodbav:"id" json:"id"`
	Integration     Integration       `dynamodbav:"integration" json:"integration"`
	ConfigEncrypted string            `dynamodbav:"configEncrypted" json:"configEncrypted"`
	Status          IntegrationStatus `dynamodbav:"status" json:"status"`
	LastHealthCheck string            `dynamodbav:"lastHealthCheck,omitempty" json:"lastHealthCheck,omitempty"`
	CreatedAt       string            `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt       string            `dynamodbav:"updatedAt" json:"updatedAt"`
	// KMSKeyID is the ARN of the key that encrypted it; EncryptionContext
	// what Decrypt must be given. Items stored before issue 17 (ciphertext
	// the client made) have neither and are refused (LegacyCredentialsError).
	KMSKeyID          string            `dynamodbav:"kmsKeyId,omitempty" json:"kmsKeyId"`
	EncryptionContext map[string]string `dynamodbav:"encryptionContext,omitempty" json:"encryptionContext"`
}

// LogValue implements slog.LogValuer: even encrypted, credentials do not
// belong in logs, which are kept longer and read by more people.
func (c IntegrationConfig) LogValue() slog.Value {
	return slog.GroupValue(slog.String("integration", string(c.Integration)), slog.String("status", string(c.Status)))
}

type integrationItem struct {
	keys
	IntegrationConfig
}

// IntegrationUpdate is the input of PutIntegration. Config is the
// plaintext configuration (a JSON object); LastHealthCheck is a Timestamp
// or "" (removes it).
type IntegrationUpdate struct {
	Config          []byte
	Status          IntegrationStatus
	LastHealthCheck string
}

// LogValue keeps the plaintext out of any log line that names an update.
func (u IntegrationUpdate) LogValue() slog.Value {
	return slog.GroupValue(slog.String("status", string(u.Status)), slog.Int("config_bytes", len(u.Config)))
}

// PutIntegration encrypts the configuration with the stage's credentials
// key (encryption context: integration and stage) and creates or replaces
// the item with the ciphertext. One UpdateItem keeps id and createdAt of
// an existing item (if_not_exists) without a read first; sent again after
// a lost answer it writes the same values, so it needs no token.
func (s *Store) PutIntegration(ctx context.Context, name Integration, in IntegrationUpdate) (*IntegrationConfig, error) {
	sealed, err := s.encryptCredentials(ctx, name, in.Config)
	if err != nil {
		return nil, err
	}
	now := Timestamp(s.now())
	encContext, err := attributevalue.Marshal(sealed.context)
	if err != nil {
		return nil, fmt.Errorf("agenticpm: marshal encryption context: %w", err)
	}
	upd := ddb.Expr{
		Update: "SET #id = if_not_exists(#id, :id), #createdAt = if_not_exists(#createdAt, :now), #integration = :integration," +
			" #config = :config, #key = :key, #context = :context, #status = :status, #updatedAt = :now",
		Names: map[string]string{"#id": contract.AttrID, "#createdAt": contract.AttrCreatedAt, "#integration": contract.AttrIntegration, "#config": contract.AttrConfigEncrypted,
			"#key": contract.AttrKMSKeyID, "#context": contract.AttrEncryptionContext, "#status": contract.AttrStatus, "#updatedAt": contract.AttrUpdatedAt, "#health": contract.AttrLastHealthCheck},
		Values: map[string]types.AttributeValue{":id": ddb.S(s.newID()), ":now": ddb.S(now), ":integration": ddb.S(name),
			":config": ddb.S(sealed.ciphertext), ":key": ddb.S(sealed.keyID), ":context": encContext, ":status": ddb.S(in.Status)},
	}
	if in.LastHealthCheck != "" {
		upd.Update += ", #health = :health"
		upd.Values[":health"] = ddb.S(in.LastHealthCheck)
	} else {
		upd.Update += " REMOVE #health"
	}
	// Unconditional: the fields are bounded far below 400 KB.
	var it integrationItem
	if err := s.update(ctx, contract.PrefixIntegration+string(name), contract.KeyConfig, upd, &it); err != nil {
		return nil, err
	}
	return &it.IntegrationConfig, nil
}

// GetIntegration returns an integration's configuration, encrypted. One
// stored before the service encrypted (no encryptionContext) is refused:
// its ciphertext was made by a client, under no context this stage's key
// users are granted, so no agent could decrypt it; PUT it again.
func (s *Store) GetIntegration(ctx context.Context, name Integration) (*IntegrationConfig, error) {
	var it integrationItem
	found, err := s.get(ctx, contract.PrefixIntegration+string(name), contract.KeyConfig, &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &NotFoundError{Entity: "integration", ID: string(name)}
	}
	if len(it.EncryptionContext) == 0 {
		return nil, &LegacyCredentialsError{Integration: name}
	}
	return &it.IntegrationConfig, nil
}

// AgentConfig is one agent setting (PK AGENT, SK CONFIG#<key>).
type AgentConfig struct {
	Key       string `dynamodbav:"key" json:"key"`
	Value     Doc    `dynamodbav:"value" json:"value"`
	UpdatedAt string `dynamodbav:"updatedAt,omitempty" json:"updatedAt,omitempty"`
	// Default marks a documented default served because no item sets the
	// key (never stored).
	Default bool `dynamodbav:"-" json:"default"`
}

type agentConfigItem struct {
	keys
	AgentConfig
}

// PutAgentConfig creates or replaces a setting.
func (s *Store) PutAgentConfig(ctx context.Context, k string, value Doc) (*AgentConfig, error) {
	c := AgentConfig{Key: k, Value: value, UpdatedAt: Timestamp(s.now())}
	item, err := marshalItem(agentConfigItem{keys: keys{PK: contract.KeyAgent, SK: contract.PrefixConfig + k}, AgentConfig: c})
	if err != nil {
		return nil, err
	}
	if err := s.put(ctx, item); err != nil {
		return nil, err
	}
	return &c, nil
}

// GetAgentConfig returns a setting; an unset key with a documented default
// (DefaultAgentConfig) returns the default, marked Default.
func (s *Store) GetAgentConfig(ctx context.Context, k string) (*AgentConfig, error) {
	var it agentConfigItem
	found, err := s.get(ctx, contract.KeyAgent, contract.PrefixConfig+k, &it)
	if err != nil {
		return nil, err
	}
	if found {
		return &it.AgentConfig, nil
	}
	if v, ok := DefaultAgentConfig[k]; ok {
		return &AgentConfig{Key: k, Value: v, Default: true}, nil
	}
	return nil, &NotFoundError{Entity: "agent config", ID: k}
}

// ListAgentConfig returns the settings in key order, the documented
// defaults of unset keys among them (marked Default). Defaults take their
// place in key order, so paging sees each key once: a page holds the
// stored items of its key range plus the defaults in that range, cut at
// limit, and its cursor is the key of its last entry, stored or not.
func (s *Store) ListAgentConfig(ctx context.Context, after string, limit int) (*Page[AgentConfig], error) {
	if limit <= 0 || limit > MaxPageSize {
		limit = DefaultPageSize
	}
	l := listing{view: "agent-config", pk: contract.KeyAgent, prefix: contract.PrefixConfig}
	from := ""
	if after != "" {
		start, err := ddb.DecodeCursor[pageKey](s.codec, l.scope(), after)
		if err != nil {
			return nil, err
		}
		if !l.contains(start) {
			return nil, ddb.ErrInvalidCursor
		}
		from = strings.TrimPrefix(start.SK, contract.PrefixConfig)
	}
	page, err := listPage[AgentConfig](ctx, s, l, after, limit)
	if err != nil {
		return nil, err
	}
	stored := map[string]bool{}
	for _, c := range page.Items {
		stored[c.Key] = true
	}
	// The stored page covers keys up to its last one, or all keys when it
	// is the last page; defaults beyond that belong to later pages.
	upTo := "\uffff"
	if page.Next != "" && len(page.Items) > 0 {
		upTo = page.Items[len(page.Items)-1].Key
	}
	merged := page.Items
	for k, v := range DefaultAgentConfig {
		if k > from && k <= upTo && !stored[k] {
			merged = append(merged, AgentConfig{Key: k, Value: v, Default: true})
		}
	}
	sort.Slice(merged, func(i, j int) bool { return merged[i].Key < merged[j].Key })
	if len(merged) <= limit {
		page.Items = merged
		return page, nil
	}
	page.Items = merged[:limit]
	next, err := ddb.EncodeCursor(s.codec, l.scope(), pageKey{PK: contract.KeyAgent, SK: contract.PrefixConfig + page.Items[limit-1].Key})
	if err != nil {
		return nil, err
	}
	page.Next = next
	return page, nil
}
