import { describe, expect, it } from 'vitest';
import { useMcpSuite } from './harness/mcp-suite.js';

const suite = useMcpSuite();

describe('the flagops MCP server over stdio', () => {
  it('introduces itself as flagops with instructions for the agent', () => {
    expect(suite.mcp.client.getServerVersion()?.name).toBe('flagops');
    expect(suite.mcp.client.getInstructions()).toContain('kill_flag');
  });

  describe('lists its tools', () => {
    const tools = async () => new Map((await suite.mcp.client.listTools()).tools.map((t) => [t.name, t]));

    it('every tool, each with a description and a JSON-schema input', async () => {
      const all = await tools();
      expect([...all.keys()].sort()).toEqual(
        [
          'clear_kill',
          'create_flag',
          'update_flag',
          'explain_evaluation',
          'get_audit_log',
          'get_flag',
          'kill_flag',
          'list_flags',
          'promote_flag',
          'schedule_rollout',
          'set_rollout',
          'update_flag_config',
          'set_variants',
          'set_prerequisites',
          'list_segments',
          'get_segment',
          'upsert_segment',
          'delete_segment',
          'list_proposals',
          'preview_change',
          'list_stale_flags',
          'archive_flag',
        ].sort(),
      );
      for (const tool of all.values()) {
        expect(tool.description?.length, tool.name).toBeGreaterThan(80);
        expect(tool.inputSchema.type, tool.name).toBe('object');
      }
    });

    it('kill_flag takes key and env, an optional reason, and says it is immediate and audited', async () => {
      const kill = (await tools()).get('kill_flag')!;
      expect(kill.inputSchema.required).toEqual(['key', 'env']);
      expect(Object.keys(kill.inputSchema.properties ?? {})).toEqual(['key', 'env', 'reason']);
      expect(kill.inputSchema.properties?.env).toMatchObject({ enum: ['dev', 'staging', 'prod'] });
      expect(kill.description).toMatch(/immediately/);
      expect(kill.description).toMatch(/audit/);
    });

    it('marks reads read-only, kill and promote destructive, and repeatable writes idempotent', async () => {
      const all = await tools();
      for (const name of ['list_flags', 'get_flag', 'get_audit_log', 'explain_evaluation']) {
        expect(all.get(name)?.annotations?.readOnlyHint, name).toBe(true);
      }
      for (const name of ['kill_flag', 'promote_flag']) {
        expect(all.get(name)?.annotations, name).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      }
      for (const name of ['kill_flag', 'clear_kill', 'set_rollout', 'update_flag_config']) {
        expect(all.get(name)?.annotations?.idempotentHint, name).toBe(true);
      }
      expect(all.get('promote_flag')?.annotations?.idempotentHint).toBe(false);
      expect(all.get('create_flag')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    });

    it('tells the agent that version_conflict means re-read, and that prod promotion needs a human', async () => {
      const all = await tools();
      for (const name of ['set_rollout', 'update_flag_config', 'clear_kill']) {
        expect(all.get(name)?.description, name).toMatch(/version_conflict.*re-read/);
      }
      expect(all.get('promote_flag')?.description).toMatch(/prod.*forbidden.*human/);
    });

    it('describes the inputs: ranges, enums and optional fields', async () => {
      const all = await tools();
      const rollout = all.get('set_rollout')!.inputSchema;
      expect(rollout.required).toEqual(['key', 'env', 'rolloutPct']);
      expect(rollout.properties?.rolloutPct).toMatchObject({ type: 'number', minimum: 0, maximum: 100 });
      const audit = all.get('get_audit_log')!.inputSchema;
      expect(audit.required ?? []).toEqual([]);
      expect(audit.properties?.action).toMatchObject({ enum: expect.arrayContaining(['kill', 'clear_kill', 'promote', 'config_update']) });
      expect(all.get('promote_flag')!.inputSchema.required).toEqual(['key', 'fromEnv', 'toEnv']);
      expect(all.get('explain_evaluation')!.inputSchema.required).toEqual(['key', 'env']);
    });
  });
});
