// Importing this module loads the Kubernetes driver up front, for callers that look drivers up
// synchronously (the LCM step function); others let the registry load it on first use. The named
// exports are for callers that need the driver's errors or its label directly.
import { KUBERNETES_VIM, registerDriver } from '#lib/vim/registry.ts';
import { kubernetesDriver } from './driver.ts';

registerDriver(KUBERNETES_VIM, kubernetesDriver);

export { kubernetesDriver, POD_DELETION_COST, type KubernetesState } from './driver.ts';
export { KubernetesError, kubeConfigOf, type ObjectRef } from './client.ts';
export { VNF_INSTANCE_LABEL, DEF_FILES_PARAM, instanceLabelValue } from './manifests.ts';
export { REVISION_LABEL } from './change-package.ts';
