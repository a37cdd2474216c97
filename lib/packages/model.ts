// The SOL005 VnfPkgInfo representation of a package record, and the attribute lists that SOL013
// filtering and selectors need for the "VNF packages" resource (SOL005 9.4.2.3.2).
import type { VnfPackageRecord } from '#lib/store/packages.ts';

export const VNF_PKG_ATTRIBUTES = [
  'id',
  'vnfdId',
  'vnfProvider',
  'vnfProductName',
  'vnfSoftwareVersion',
  'vnfdVersion',
  'compatibleSpecificationVersions',
  'checksum',
  'packageSecurityOption',
  'signingCertificate',
  'softwareImages',
  'additionalArtifacts',
  'onboardingState',
  'operationalState',
  'usageState',
  'vnfmInfo',
  'userDefinedData',
  'onboardingFailureDetails',
  '_links',
] as const;

export const VNF_PKG_DEFAULT_EXCLUDED = ['softwareImages', 'additionalArtifacts', 'userDefinedData', 'checksum', 'onboardingFailureDetails'] as const;

export function renderVnfPkgInfo(record: VnfPackageRecord, version: 1 | 2, baseUrl: string): Record<string, unknown> {
  const self = `${baseUrl}/vnfpkgm/v${version}/vnf_packages/${record.id}`;
  const body: Record<string, unknown> = {};
  for (const key of VNF_PKG_ATTRIBUTES) {
    if (record[key] !== undefined) body[key] = record[key];
  }
  // Tacker's v1 clients expect an (empty) userDefinedData object even when none was given.
  if (version === 1) body.userDefinedData ??= {};
  body._links = {
    self: { href: self },
    vnfd: { href: `${self}/vnfd` },
    packageContent: { href: `${self}/package_content` },
  };
  return body;
}
