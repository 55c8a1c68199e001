/**
 * Great-circle geometry for the `location` filter (docs/api.md#location-parameter): distances on a
 * sphere of the mean Earth radius (IUGG, 6 371 008.8 m) by the haversine formula, and the
 * latitude/longitude box that surely contains a circle, so an index can narrow candidates before
 * the exact check.
 */

export const EARTH_RADIUS_M = 6_371_008.8;

const rad = (deg: number) => (deg * Math.PI) / 180;
const deg = (r: number) => (r * 180) / Math.PI;

/** Great-circle distance in meters between two points given in degrees. */
export function distanceMeters(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const h = Math.sin(rad(b.latitude - a.latitude) / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(rad(b.longitude - a.longitude) / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(h));
}

/** The point `meters` away from `from` along the initial `bearing` (degrees clockwise from north). */
export function destination(from: { latitude: number; longitude: number }, bearing: number, meters: number): { latitude: number; longitude: number } {
  const d = meters / EARTH_RADIUS_M;
  const lat1 = rad(from.latitude);
  const lat2 = Math.asin(Math.sin(lat1) * Math.cos(d) + Math.cos(lat1) * Math.sin(d) * Math.cos(rad(bearing)));
  const lon2 = rad(from.longitude) + Math.atan2(Math.sin(rad(bearing)) * Math.sin(d) * Math.cos(lat1), Math.cos(d) - Math.sin(lat1) * Math.sin(lat2));
  return { latitude: deg(lat2), longitude: ((deg(lon2) + 540) % 360) - 180 };
}

/**
 * A box (degrees) containing every point within `meters` of the centre, with 1 % margin against
 * rounding. `minLongitude > maxLongitude` means the box crosses the antimeridian; a box touching
 * a pole spans every longitude.
 */
export function boundingBox(centre: { latitude: number; longitude: number }, meters: number) {
  const d = (meters * 1.01) / EARTH_RADIUS_M;
  const minLatitude = centre.latitude - deg(d);
  const maxLatitude = centre.latitude + deg(d);
  if (minLatitude <= -90 || maxLatitude >= 90) return { minLatitude: Math.max(minLatitude, -90), maxLatitude: Math.min(maxLatitude, 90), minLongitude: -180, maxLongitude: 180 };
  const dLon = deg(Math.asin(Math.sin(d) / Math.cos(rad(centre.latitude))));
  const wrap = (lon: number) => (lon < -180 ? lon + 360 : lon > 180 ? lon - 360 : lon);
  return { minLatitude, maxLatitude, minLongitude: wrap(centre.longitude - dLon), maxLongitude: wrap(centre.longitude + dLon) };
}
