// The parts of the API's resources the console shows (SOL003/SOL005 data types, as the API renders them).

export interface ProblemDetails {
  title?: string;
  status?: number;
  detail?: string;
}

export interface VnfPackage {
  id: string;
  vnfdId?: string;
  vnfProvider?: string;
  vnfProductName?: string;
  vnfSoftwareVersion?: string;
  vnfdVersion?: string;
  onboardingState: string;
  operationalState: string;
  usageState: string;
  onboardingFailureDetails?: ProblemDetails;
  softwareImages?: Array<{ id: string; name?: string }>;
  userDefinedData?: Record<string, unknown>;
}

export interface VnfcResource {
  id: string;
  vduId: string;
  computeResource?: { vimConnectionId?: string; resourceId?: string; vimLevelResourceType?: string };
}

export interface VnfInstance {
  id: string;
  vnfInstanceName?: string;
  vnfInstanceDescription?: string;
  vnfdId: string;
  vnfPkgId?: string;
  vnfProvider?: string;
  vnfProductName?: string;
  instantiationState: 'NOT_INSTANTIATED' | 'INSTANTIATED';
  vimConnectionInfo?: Record<string, { vimId?: string; vimType?: string }>;
  metadata?: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  instantiatedVnfInfo?: {
    flavourId?: string;
    vnfState?: string;
    scaleStatus?: Array<{ aspectId: string; scaleLevel: number }>;
    maxScaleLevels?: Array<{ aspectId: string; scaleLevel: number }>;
    vnfcResourceInfo?: VnfcResource[];
  };
}

export interface OpOcc {
  id: string;
  operationState: string;
  stateEnteredTime: string;
  startTime: string;
  vnfInstanceId: string;
  operation: string;
  isAutomaticInvocation?: boolean;
  isCancelPending?: boolean;
  operationParams?: unknown;
  error?: ProblemDetails;
  resourceChanges?: unknown;
  lcmCoordinations?: Array<{ id: string; coordinationActionName: string; coordinationResult?: string; startTime: string; endTime?: string }>;
}

export interface Alarm {
  id: string;
  managedObjectId: string;
  alarmRaisedTime: string;
  alarmClearedTime?: string;
  ackState: 'ACKNOWLEDGED' | 'UNACKNOWLEDGED';
  perceivedSeverity: string;
  eventType?: string;
  probableCause?: string;
  faultDetails?: string[];
}

export interface Vim {
  vimId?: string;
  id?: string;
  name?: string;
  vimType: string;
  status?: string;
  isDefault?: boolean;
  interfaceInfo?: Record<string, unknown>;
}

export interface Subscription {
  id: string;
  callbackUri: string;
  filter?: unknown;
}
