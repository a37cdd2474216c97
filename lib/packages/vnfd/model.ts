// What the VNFM keeps of a VNFD once onboarding has parsed it: the VNF's identity, its deployment
// flavours and software images. LCM, the VIM drivers and fault management read only these shapes,
// never the TOSCA YAML, so that a package is parsed once.

export interface VnfdReader {
  readText(path: string): Promise<string>;
  has(path: string): boolean;
}

export interface Checksum {
  algorithm: string;
  hash: string;
}

/** SOL001 SwImageData as written (sizes keep their scalar-unit strings); `file` is the image artifact's package path. */
export interface SwImage {
  name: string;
  version: string;
  checksum: Checksum;
  containerFormat: string;
  diskFormat: string;
  minDisk?: string;
  minRam?: string;
  size?: string;
  file?: string;
}

export interface VduInfo {
  id: string;
  name: string;
  description?: string;
  vduProfile?: { minNumberOfInstances: number; maxNumberOfInstances: number };
  swImage?: SwImage;
  virtualCompute?: {
    virtualMemSize?: string;
    numVirtualCpu?: number;
    virtualLocalStorage?: unknown[];
    /** The compute flavour Tacker asks the VIM for (requested_additional_capability_name). */
    requestedAdditionalCapabilityName?: string;
  };
  /** Storage nodes attached through virtual_storage requirements. */
  storages: string[];
  monitoringParameters?: unknown[];
  bootOrder?: unknown;
}

export interface StorageInfo {
  id: string;
  virtualBlockStorageData?: { sizeOfStorage?: string; rdmaEnabled?: boolean };
  swImage?: SwImage;
}

export interface CpInfo {
  id: string;
  layerProtocols?: string[];
  order?: number;
  vnicType?: string;
  /** The Vdu.Compute node of the virtual_binding requirement. */
  vdu?: string;
  /** The internal VnfVirtualLink of the virtual_link requirement (absent for a CP on an external VL). */
  virtualLink?: string;
}

export interface ExtCpInfo {
  id: string;
  layerProtocols?: string[];
  internalVirtualLink?: string;
}

export interface VirtualLinkInfo {
  id: string;
  connectivityType?: unknown;
  vlProfile?: unknown;
  description?: string;
}

export interface ScalingAspectInfo {
  id: string;
  name?: string;
  description?: string;
  maxScaleLevel: number;
  stepDeltas?: string[];
}

export interface VduScalingAspectDeltasInfo {
  aspectId: string;
  /** deltaId -> vduId -> number of instances. */
  deltas: Record<string, Record<string, number>>;
  targets: string[];
}

export interface InstantiationLevelsInfo {
  default?: string;
  levels: Record<string, { description?: string; scaleInfo?: Record<string, { scaleLevel: number }> }>;
}

export interface AffinityRuleInfo {
  id: string;
  type: 'affinity' | 'anti-affinity';
  scope?: string;
  /** Node names, with placement groups replaced by their members (as Tacker does). */
  targets: string[];
}

export interface ArtifactRef {
  name: string;
  file: string;
  type?: string;
}

export interface LcmOperationInfo {
  implementation?: string;
  artifact?: ArtifactRef;
  dependencies?: ArtifactRef[];
}

export interface FlavourInfo {
  flavourId: string;
  description?: string;
  vdus: VduInfo[];
  storages: StorageInfo[];
  cps: CpInfo[];
  extCps: ExtCpInfo[];
  virtualLinks: VirtualLinkInfo[];
  scalingAspects: ScalingAspectInfo[];
  vduScalingAspectDeltas: VduScalingAspectDeltasInfo[];
  instantiationLevels: InstantiationLevelsInfo;
  /** vduId -> instantiation level -> number of instances. */
  vduInstantiationLevels: Record<string, Record<string, number>>;
  /** vduId -> initial number of instances. */
  vduInitialDeltas: Record<string, number>;
  affinityRules: AffinityRuleInfo[];
  /** Vnflcm interface operations of the flavour's VNF node (instantiate, instantiate_start, change_current_package, ...). */
  lcmOperations: Record<string, LcmOperationInfo>;
  /** Node templates of the flavour that substitution_mappings requirements expose as external CPs. */
  externalCps: string[];
}

/** One software image contained in the package: the data of a SOL005 VnfPackageSoftwareImageInfo. */
export interface SoftwareImageInfo {
  /** The node template (Vdu.Compute or Vdu.VirtualBlockStorage) the image belongs to. */
  id: string;
  name: string;
  provider?: string;
  version: string;
  checksum: Checksum;
  containerFormat: string;
  diskFormat: string;
  /** Bytes, as SOL005 VnfPackageSoftwareImageInfo.minDisk defines it (and Tacker stores it). */
  minDisk: number;
  /** Bytes. */
  minRam?: number;
  /** Bytes. */
  size: number;
  /** The image file inside the package; absent for an image the VNFD names only (the VIM has it, e.g. by name). */
  imagePath?: string;
  userMetadata?: Record<string, string>;
}

export interface ParsedVnfd {
  vnfdId: string;
  vnfProvider: string;
  vnfProductName: string;
  vnfSoftwareVersion: string;
  vnfdVersion: string;
  vnfmInfo?: string[];
  /** Every YAML file of the VNFD inside the package (entry first, then imports as found). */
  descriptorFiles: string[];
  flavours: FlavourInfo[];
  softwareImages: SoftwareImageInfo[];
  /** Every package file the VNFD references as an artifact (software images, LCM scripts, ...). */
  artifactFiles: string[];
}
