import { xBuildRoutes } from '@sbc/api';

// The spec's twelve statuses are named once, in the API's route specs, which the job list filter validates by.
const JOB_STATUSES = xBuildRoutes.XB_JOB_STATUSES;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The pipeline stages: a claimed job is in one of these while a worker holds its lease. */
export const STAGES = ['screening', 'building', 'auditing', 'publishing', 'verifying', 'fixing', 'drafting'] as const;
export type Stage = (typeof STAGES)[number];

/** Not yet settled: queued or in a stage. These count for "one active job per author / conversation". */
export const OPEN_STATUSES = ['queued', ...STAGES] as const;

export function isStage(value: string): value is Stage {
  return (STAGES as readonly string[]).includes(value);
}

export function isJobStatus(value: string): value is JobStatus {
  return (JOB_STATUSES as readonly string[]).includes(value);
}
