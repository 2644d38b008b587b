// Unit cube with a spherical cavity: a smooth curved inner boundary in a
// box (a classic solid-mechanics / potential-flow test domain).
// gmsh -3 -format msh22 -setnumber h 0.05 cube-sphere-hole.geo
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.05, Name "mesh size"} ];
Box(1) = {0, 0, 0, 1, 1, 1};
Sphere(2) = {0.5, 0.5, 0.5, 0.3};
BooleanDifference{ Volume{1}; Delete; }{ Volume{2}; Delete; }
Mesh.CharacteristicLengthMax = h;
Mesh.CharacteristicLengthMin = h / 2;
