-- What a sensor's readings cover (gpu, module, grace, cpu, sysio, memory, node), as its agent
-- stated it: on a GH200 the NVML energy counter covers the whole module. NULL for sensors stored
-- before agents said so (their scope is their name's component).
ALTER TABLE "telemetry_sensors" ADD COLUMN "scope" TEXT;
