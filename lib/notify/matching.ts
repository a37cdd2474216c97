// Which subscriptions a change concerns: SOL003 5.5.3.12 LifecycleChangeNotificationsFilter and
// 4.4.1.5 VnfInstanceSubscriptionFilter. All attributes present must match (AND); an array
// matches when one of its values does (OR); an absent filter matches everything.
import type { InstanceSnapshot, LifecycleChangeNotificationsFilter, NotificationEvent, VnfInstanceSubscriptionFilter } from './model.ts';

export function instanceMatches(filter: VnfInstanceSubscriptionFilter, vnfInstanceId: string, instance: InstanceSnapshot): boolean {
  if (filter.vnfdIds && !filter.vnfdIds.includes(instance.vnfdId)) return false;
  if (filter.vnfProductsFromProviders && !filter.vnfProductsFromProviders.some((provider) => provider.vnfProvider === instance.vnfProvider
    && (!provider.vnfProducts || provider.vnfProducts.some((product) => product.vnfProductName === instance.vnfProductName
      && (!product.versions || product.versions.some((version) => version.vnfSoftwareVersion === instance.vnfSoftwareVersion
        && (!version.vnfdVersions || version.vnfdVersions.includes(instance.vnfdVersion)))))))) {
    return false;
  }
  if (filter.vnfInstanceIds && !filter.vnfInstanceIds.includes(vnfInstanceId)) return false;
  if (filter.vnfInstanceNames && (instance.vnfInstanceName === undefined || !filter.vnfInstanceNames.includes(instance.vnfInstanceName))) return false;
  return true;
}

export function subscriptionMatches(filter: LifecycleChangeNotificationsFilter | undefined, event: NotificationEvent): boolean {
  if (!filter) return true;
  if (filter.notificationTypes && !filter.notificationTypes.includes(event.notificationType)) return false;
  if (event.notificationType === 'VnfLcmOperationOccurrenceNotification') {
    if (filter.operationTypes && !(event.opOcc && filter.operationTypes.includes(event.opOcc.operation))) return false;
    if (filter.operationStates && !(event.opOcc && filter.operationStates.includes(event.opOcc.operationState))) return false;
  }
  if (filter.vnfInstanceSubscriptionFilter && !instanceMatches(filter.vnfInstanceSubscriptionFilter, event.vnfInstanceId, event.instance)) return false;
  return true;
}
