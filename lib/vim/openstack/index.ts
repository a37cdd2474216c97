// Importing this module makes OpenStack VIMs known to the driver registry (the LCM engine imports it
// once); the named exports are for callers that need the driver's errors or clients directly.
import { OPENSTACK_VIM, registerDriver } from '#lib/vim/registry.ts';
import { openStackDriver } from './driver.ts';

registerDriver(OPENSTACK_VIM, openStackDriver);

export { openStackDriver, stackNameOf, imageNameOf, type ImageRecord, type OpenStackState } from './driver.ts';
export { VimError, type OpenStackService } from './errors.ts';
export { clearTokenCache } from './keystone.ts';
