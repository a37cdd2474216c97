// Importing this module loads the OpenStack driver up front, for callers that look drivers up
// synchronously (the LCM step function); others let the registry load it on first use. The named
// exports are for callers that need the driver's errors or clients directly.
import { OPENSTACK_VIM, registerDriver } from '#lib/vim/registry.ts';
import { openStackDriver } from './driver.ts';

registerDriver(OPENSTACK_VIM, openStackDriver);

export { openStackDriver, stackNameOf, imageNameOf, type ImageRecord, type OpenStackState } from './driver.ts';
export { VimError, type OpenStackService } from './errors.ts';
export { clearTokenCache } from './keystone.ts';
