-- Issue 28 §2: clusters whose compute nodes have no Node.js. How a cluster's agents get their
-- runtime ('auto': probed; 'command': agentCommand always; 'staged': erg's own always) and where
-- erg stages its runtime (NULL: <work_dir>/.erg/runtime). See docs/operations.md.
ALTER TABLE "clusters" ADD COLUMN "agent_runtime" TEXT NOT NULL DEFAULT 'auto';
ALTER TABLE "clusters" ADD COLUMN "runtime_dir" TEXT;
