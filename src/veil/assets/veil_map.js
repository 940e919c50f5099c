/* veil map: draws the layers described by the JSON block #veil-map-data with Leaflet.
 * Everything the page needs is inline; without tiles nothing is fetched from anywhere. */
(function () {
  "use strict";
  var spec = JSON.parse(document.getElementById("veil-map-data").textContent);

  function escapeHtml(text) {
    // Layer names reach the layer control through innerHTML.
    return String(text).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;"}[c];
    });
  }

  var map = L.map("veil-map", {preferCanvas: true, minZoom: 1, maxZoom: spec.maxZoom});
  var renderer = L.canvas({padding: 0.5});

  if (spec.tiles) {
    L.tileLayer(spec.tiles, {maxZoom: spec.maxZoom}).addTo(map);
  }

  var make = {
    point: function (d, i, opts) { return L.circleMarker([d.lat[i], d.lon[i]], opts); },
    circle: function (d, i, opts) {
      return L.circle([d.lat[i], d.lon[i]], L.extend({radius: d.r[i]}, opts));
    },
    line: function (d, i, opts) {
      return L.polyline([[d.lat[i], d.lon[i]], [d.lat_dp[i], d.lon_dp[i]]], opts);
    }
  };
  // Popups name the layer and give lengths, never coordinates.
  var describe = {
    point: function (l, label) { return label; },
    circle: function (l) { return "Perturbation radius: " + l.getRadius().toFixed(0) + " m"; },
    line: function (l) {
      var p = l.getLatLngs();
      return "Displacement: " + p[0].distanceTo(p[1]).toFixed(0) + " m";
    }
  };

  var overlays = {}, byName = {};
  spec.overlays.forEach(function (overlay) {
    var group = L.featureGroup();
    overlay.parts.forEach(function (part) {
      var d = part.data, n = d.lat.length, layers = new Array(n);
      var opts = L.extend({renderer: renderer}, part.style);
      for (var i = 0; i < n; i++) { layers[i] = make[part.kind](d, i, opts); }
      // One feature group per part: the browser fires one add event, not one per point.
      group.addLayer(L.featureGroup(layers).bindPopup(function (l) {
        return document.createTextNode(describe[part.kind](l, part.label));
      }));
    });
    if (overlay.heat) {
      var src = spec.overlays[overlay.heat.source].parts[0].data;
      var pts = new Array(src.lat.length);
      for (var j = 0; j < pts.length; j++) { pts[j] = [src.lat[j], src.lon[j]]; }
      group = L.heatLayer(pts, overlay.heat.options);
    }
    if (overlay.show) { group.addTo(map); }
    overlays[escapeHtml(overlay.name)] = group;
    byName[overlay.name] = group;
  });
  L.control.layers(null, overlays, {collapsed: false}).addTo(map);
  L.control.scale({imperial: false}).addTo(map);

  // A latitude/longitude grid, so that a map without tiles can still be read.
  map.createPane("veilGrid");
  var gridRenderer = L.canvas({pane: "veilGrid", padding: 0.5});
  var grid = L.layerGroup().addTo(map);
  var steps = [30, 10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001,
               0.0005, 0.0002, 0.0001, 0.00005, 0.00002, 0.00001];
  var lineStyle = {renderer: gridRenderer, interactive: false, color: "#9e9e9e", weight: 1,
                   opacity: 0.6};

  function label(value, step, latLng, direction) {
    var digits = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
    return L.tooltip({permanent: true, direction: direction, pane: "veilGrid",
                      className: "veil-grid-label", interactive: false})
      .setLatLng(latLng).setContent(value.toFixed(digits) + "\u00b0");
  }

  function drawGrid() {
    grid.clearLayers();
    var b = map.getBounds();
    var south = Math.max(b.getSouth(), -85), north = Math.min(b.getNorth(), 85);
    var west = b.getWest(), east = b.getEast();
    var span = Math.max(north - south, east - west), step = steps[steps.length - 1];
    for (var k = 0; k < steps.length; k++) {
      if (span / steps[k] >= 4) { step = steps[k]; break; }
    }
    var y0 = Math.ceil(south / step), y1 = Math.floor(north / step);
    for (var y = y0; y <= y1; y++) {
      grid.addLayer(L.polyline([[y * step, west], [y * step, east]], lineStyle));
      grid.addLayer(label(y * step, step, [y * step, west], "right"));
    }
    var x0 = Math.ceil(west / step), x1 = Math.floor(east / step);
    for (var x = x0; x <= x1; x++) {
      grid.addLayer(L.polyline([[south, x * step], [north, x * step]], lineStyle));
      grid.addLayer(label(x * step, step, [south, x * step], "top"));
    }
  }
  map.on("moveend", drawGrid);

  if (spec.bounds) {
    map.fitBounds(spec.bounds, {maxZoom: spec.fitMaxZoom});
  } else {
    map.setView(spec.centre, 2);
  }

  // A handle for scripting and for the browser tests.
  window.veilMap = {map: map, overlays: byName};
})();
