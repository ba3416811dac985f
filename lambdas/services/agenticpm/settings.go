package agenticpm

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
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

func checkpointSK(integration, k string) string { return prefixCheckpoint + integration + "#" + k }

// PutCheckpoint stores (creates or replaces) a checkpoint of an existing
// project.
func (s *Store) PutCheckpoint(ctx context.Context, projectID, integration, k, value string) (*Checkpoint, error) {
	c := Checkpoint{ProjectID: projectID, Integration: integration, CheckpointKey: k, CheckpointValue: value,
		UpdatedAt: Timestamp(s.now())}
	item, err := marshalItem(checkpointItem{keys: keys{PK: projectPK(projectID), SK: checkpointSK(integration, k)}, Checkpoint: c})
	if err != nil {
		return nil, err
	}
	if err := s.transactInProject(ctx, projectID, s.putAny(item)); err != nil {
		return nil, err
	}
	return &c, nil
}

// GetCheckpoint returns a checkpoint.
func (s *Store) GetCheckpoint(ctx context.Context, projectID, integration, k string) (*Checkpoint, error) {
	var it checkpointItem
	found, err := s.get(ctx, projectPK(projectID), checkpointSK(integration, k), &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, s.missingUnder(ctx, projectID, "checkpoint", integration+"/"+k)
	}
	return &it.Checkpoint, nil
}

// IntegrationConfig holds an integration's credentials (PK
// INTEGRATION#<name>, SK CONFIG). ConfigEncrypted is encrypted by the
// caller with KMS (decision 10); the service stores it as opaque text.
type IntegrationConfig struct {
	ID              string            `dynamodbav:"id" json:"id"`
	Integration     Integration       `dynamodbav:"integration" json:"integration"`
	ConfigEncrypted string            `dynamodbav:"configEncrypted" json:"configEncrypted"`
	Status          IntegrationStatus `dynamodbav:"status" json:"status"`
	LastHealthCheck string            `dynamodbav:"lastHealthCheck,omitempty" json:"lastHealthCheck,omitempty"`
	CreatedAt       string            `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt       string            `dynamodbav:"updatedAt" json:"updatedAt"`
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

// IntegrationUpdate is the input of PutIntegration. LastHealthCheck is a
// Timestamp or "" (removes it).
type IntegrationUpdate struct {
	ConfigEncrypted string
	Status          IntegrationStatus
	LastHealthCheck string
}

// PutIntegration creates or replaces an integration's configuration. One
// UpdateItem keeps id and createdAt of an existing item (if_not_exists)
// without a read first.
func (s *Store) PutIntegration(ctx context.Context, name Integration, in IntegrationUpdate) (*IntegrationConfig, error) {
	now := Timestamp(s.now())
	upd := expression.Set(expression.Name("id"), expression.IfNotExists(expression.Name("id"), expression.Value(s.newID()))).
		Set(expression.Name("createdAt"), expression.IfNotExists(expression.Name("createdAt"), expression.Value(now))).
		Set(expression.Name("integration"), expression.Value(name)).
		Set(expression.Name("configEncrypted"), expression.Value(in.ConfigEncrypted)).
		Set(expression.Name("status"), expression.Value(in.Status)).
		Set(expression.Name("updatedAt"), expression.Value(now))
	if in.LastHealthCheck != "" {
		upd = upd.Set(expression.Name("lastHealthCheck"), expression.Value(in.LastHealthCheck))
	} else {
		upd = upd.Remove(expression.Name("lastHealthCheck"))
	}
	// Unconditional: the fields are bounded far below 400 KB.
	var it integrationItem
	if err := s.update(ctx, prefixIntegration+string(name), skConfig, upd, nil, &it); err != nil {
		return nil, err
	}
	return &it.IntegrationConfig, nil
}

// GetIntegration returns an integration's configuration.
func (s *Store) GetIntegration(ctx context.Context, name Integration) (*IntegrationConfig, error) {
	var it integrationItem
	found, err := s.get(ctx, prefixIntegration+string(name), skConfig, &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &NotFoundError{Entity: "integration", ID: string(name)}
	}
	return &it.IntegrationConfig, nil
}

// AgentConfig is one agent setting (PK AGENT, SK CONFIG#<key>).
type AgentConfig struct {
	Key       string `dynamodbav:"key" json:"key"`
	Value     Doc    `dynamodbav:"value" json:"value"`
	UpdatedAt string `dynamodbav:"updatedAt" json:"updatedAt"`
}

type agentConfigItem struct {
	keys
	AgentConfig
}

// PutAgentConfig creates or replaces a setting.
func (s *Store) PutAgentConfig(ctx context.Context, k string, value Doc) (*AgentConfig, error) {
	c := AgentConfig{Key: k, Value: value, UpdatedAt: Timestamp(s.now())}
	item, err := marshalItem(agentConfigItem{keys: keys{PK: pkAgent, SK: prefixConfig + k}, AgentConfig: c})
	if err != nil {
		return nil, err
	}
	if err := s.put(ctx, item); err != nil {
		return nil, err
	}
	return &c, nil
}

// GetAgentConfig returns a setting. Unset keys are not found, even those
// with a DefaultAgentConfig.
func (s *Store) GetAgentConfig(ctx context.Context, k string) (*AgentConfig, error) {
	var it agentConfigItem
	found, err := s.get(ctx, pkAgent, prefixConfig+k, &it)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, &NotFoundError{Entity: "agent config", ID: k}
	}
	return &it.AgentConfig, nil
}

// ListAgentConfig returns the settings in key order.
func (s *Store) ListAgentConfig(ctx context.Context, after string, limit int) (*Page[AgentConfig], error) {
	return listPage[AgentConfig](ctx, s, listing{view: "agent-config", pk: pkAgent, prefix: prefixConfig}, after, limit)
}
