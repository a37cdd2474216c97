// What the PM notifications need of the PM model, kept apart from its schemas so that every
// function wiring the notification families (lib/deps.ts) does not carry them.
export const PM_NOTIFICATION_API_VERSION = '2.2.0';

export const reportHref = (apiRoot: string, jobId: string, reportId: string): string => `${apiRoot}/vnfpm/v2/pm_jobs/${jobId}/reports/${reportId}`;
